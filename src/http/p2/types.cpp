// wasi:http@0.2's types on host objects. Fields follow the rules of the 0.3
// types (http/fields.hpp). A request's body is read from the server's loop
// through the exchange; a response's goes back through it, buffered in the
// body until response-outparam.set gives it a place. Child resources (a
// body's stream) must be dropped before their parent is finished, as
// wasmtime requires: finishing earlier traps.
#include "types.hpp"

#include <poll.h>

#include <algorithm>
#include <cctype>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "cmhost/error.hpp"
#include "wasi/core/clocks.hpp"
#include "wasi/p2/common.hpp"

namespace cmhost::http::p2 {

namespace {

using abi::typed::Result;
using StreamError = io::streams::StreamError;
using ReadResult = Result<std::vector<uint8_t>, StreamError>;
using CountResult = Result<uint64_t, StreamError>;
using WriteResult = Result<void, StreamError>;
using TrailersResult = Result<Result<std::optional<Own<types::Trailers>>, ErrorCode>, void>;

constexpr size_t kMaxRead = 64 * 1024;
constexpr int kWaitSliceMs = 100;

types::HeaderError header_error(FieldError error) {
  switch (error) {
    case FieldError::forbidden: return types::header_error::Forbidden{};
    case FieldError::immutable: return types::header_error::Immutable{};
    case FieldError::invalid_syntax:
    case FieldError::size_exceeded: break;  // 0.2 has no case for a size
  }
  return types::header_error::InvalidSyntax{};
}

Result<void, types::HeaderError> status_of(std::optional<FieldError> error) {
  if (error) return Result<void, types::HeaderError>::err(header_error(*error));
  return Result<void, types::HeaderError>::ok();
}

std::string text_of(const types::FieldValue& bytes) { return std::string(bytes.begin(), bytes.end()); }
types::FieldValue bytes_of(const std::string& text) { return types::FieldValue(text.begin(), text.end()); }

// Waits until `fd` is readable (an exchange's level-triggered eventfd), in
// slices so that the store's epoch deadline ends the wait.
void wait_readable(Caller& caller, int fd, const char* what) {
  while (!wasi::core::wait_for(fd, POLLIN, kWaitSliceMs))
    if (caller.store().interrupted())
      throw_trap(std::string("interrupted: the store's epoch deadline passed while ") + what + " waited");
}

class HostFields final : public types::Fields {
 public:
  explicit HostFields(FieldList list) : list_(std::move(list)) {}
  const FieldList& list() const { return list_; }

  std::vector<types::FieldValue> get(Caller&, types::FieldName name) override {
    std::vector<types::FieldValue> out;
    for (const std::string& value : list_.get(name)) out.push_back(bytes_of(value));
    return out;
  }
  bool has(Caller&, types::FieldName name) override { return list_.has(name); }
  Result<void, types::HeaderError> set(Caller&, types::FieldName name, std::vector<types::FieldValue> value) override {
    std::vector<std::string> texts;
    for (const auto& bytes : value) texts.push_back(text_of(bytes));
    return status_of(list_.set(name, std::move(texts)));
  }
  Result<void, types::HeaderError> delete_(Caller&, types::FieldName name) override {
    return status_of(list_.remove(name));
  }
  Result<void, types::HeaderError> append(Caller&, types::FieldName name, types::FieldValue value) override {
    return status_of(list_.append(name, text_of(value)));
  }
  std::vector<std::tuple<types::FieldName, types::FieldValue>> entries(Caller&) override {
    std::vector<std::tuple<types::FieldName, types::FieldValue>> out;
    for (const auto& [name, value] : list_.entries()) out.emplace_back(name, bytes_of(value));
    return out;
  }
  std::unique_ptr<types::Fields> clone(Caller&) override { return std::make_unique<HostFields>(list_.mutable_copy()); }

 private:
  FieldList list_;
};

std::unique_ptr<types::Fields> immutable_fields(const FieldList& list) {
  FieldList copy = list;
  copy.make_immutable();
  return std::make_unique<HostFields>(std::move(copy));
}

// The error behind a body stream's last-operation-failed: what
// http-error-code tells the guest.
class HttpIoError final : public io::error::Error {
 public:
  explicit HttpIoError(ErrorCode code) : code(std::move(code)) {}
  std::string to_debug_string(Caller&) override { return "wasi:http body failed"; }
  ErrorCode code;
};

ErrorCode error_of(RequestBodyFailure failure) {
  if (failure == RequestBodyFailure::body_size) return types::error_code::HTTPRequestBodySize{std::nullopt};
  return types::error_code::ConnectionTerminated{};
}

// Ready when the exchange's eventfd is readable.
class ExchangePollable final : public wasi::detail::FdPollable {
 public:
  ExchangePollable(int fd, std::shared_ptr<ProxyExchange> exchange)
      : FdPollable(fd, POLLIN, std::move(exchange)) {}
};

// --- a served request's body --------------------------------------------------

class RequestBodyStream final : public io::streams::InputStream {
 public:
  RequestBodyStream(std::shared_ptr<const TypesContext> context, std::shared_ptr<ProxyExchange> exchange,
                    std::shared_ptr<const void> alive)
      : context_(std::move(context)), exchange_(std::move(exchange)), alive_(std::move(alive)) {}

  ReadResult read(Caller& caller, uint64_t len) override { return take(caller, len, false); }
  ReadResult blocking_read(Caller& caller, uint64_t len) override { return take(caller, len, true); }
  CountResult skip(Caller& caller, uint64_t len) override { return counted(take(caller, len, false)); }
  CountResult blocking_skip(Caller& caller, uint64_t len) override { return counted(take(caller, len, true)); }
  std::unique_ptr<io::poll::Pollable> subscribe(Caller&) override {
    return std::make_unique<ExchangePollable>(exchange_->request_ready_fd(), exchange_);
  }

 private:
  static CountResult counted(ReadResult r) {
    if (r.is_err()) return CountResult::err(std::move(r.error()));
    return CountResult::ok(r.value().size());
  }

  ReadResult take(Caller& caller, uint64_t len, bool block) {
    std::string out;
    for (;;) {
      switch (exchange_->read_request(std::min<uint64_t>(len, kMaxRead), out)) {
        case ProxyExchange::Read::bytes: return ReadResult::ok(std::vector<uint8_t>(out.begin(), out.end()));
        case ProxyExchange::Read::ended: return ReadResult::err(io::streams::stream_error::Closed{});
        case ProxyExchange::Read::failed: {
          const ErrorCode code = error_of(exchange_->request_failure().value_or(RequestBodyFailure::connection_terminated));
          return ReadResult::err(io::streams::stream_error::LastOperationFailed{
              context_->errors->make_own(caller.store(), std::make_unique<HttpIoError>(code))});
        }
        case ProxyExchange::Read::pending:
          if (!block || len == 0) return ReadResult::ok();
          wait_readable(caller, exchange_->request_ready_fd(), "a request body's blocking-read");
      }
    }
  }

  std::shared_ptr<const TypesContext> context_;
  std::shared_ptr<ProxyExchange> exchange_;
  std::shared_ptr<const void> alive_;  // the body sees whether its stream is dropped
};

// The rest of a body once its stream is dropped: read and thrown away
// until the end, which brings the trailers.
bool drain_request(ProxyExchange& exchange) {
  std::string discarded;
  for (;;) {
    discarded.clear();
    const ProxyExchange::Read read = exchange.read_request(kMaxRead, discarded);
    if (read == ProxyExchange::Read::pending) return false;
    if (read != ProxyExchange::Read::bytes) return true;
  }
}

class TrailersPollable final : public wasi::detail::FdPollable {
 public:
  explicit TrailersPollable(std::shared_ptr<ProxyExchange> exchange)
      : FdPollable(exchange->request_ready_fd(), POLLIN, exchange), exchange_(std::move(exchange)) {}
  bool ready(Caller&) override { return drain_request(*exchange_); }

 private:
  std::shared_ptr<ProxyExchange> exchange_;
};

class HostFutureTrailers final : public types::FutureTrailers {
 public:
  HostFutureTrailers(std::shared_ptr<const TypesContext> context, std::shared_ptr<ProxyExchange> exchange)
      : context_(std::move(context)), exchange_(std::move(exchange)) {}

  std::unique_ptr<io::poll::Pollable> subscribe(Caller&) override {
    return std::make_unique<TrailersPollable>(exchange_);
  }
  std::optional<TrailersResult> get(Caller& caller) override {
    if (taken_) return TrailersResult::err();
    if (!drain_request(*exchange_)) return std::nullopt;
    taken_ = true;
    using Inner = Result<std::optional<Own<types::Trailers>>, ErrorCode>;
    if (const auto failure = exchange_->request_failure()) return TrailersResult::ok(Inner::err(error_of(*failure)));
    const std::vector<wire::Field> trailers = exchange_->request_trailers();
    if (trailers.empty()) return TrailersResult::ok(Inner::ok(std::nullopt));
    FieldList list(context_->forbidden);
    for (const auto& [name, value] : trailers) list.add_from_host(name, value);
    list.make_immutable();
    return TrailersResult::ok(
        Inner::ok(context_->resources->fields.make_own(caller.store(), std::make_unique<HostFields>(std::move(list)))));
  }

 private:
  std::shared_ptr<const TypesContext> context_;
  std::shared_ptr<ProxyExchange> exchange_;
  bool taken_ = false;
};

class HostIncomingBody final : public types::IncomingBody {
 public:
  HostIncomingBody(std::shared_ptr<const TypesContext> context, std::shared_ptr<ProxyExchange> exchange)
      : context_(std::move(context)), exchange_(std::move(exchange)) {}

  Result<Own<io::streams::InputStream>, void> stream(Caller& caller) override {
    if (stream_given_) return Result<Own<io::streams::InputStream>, void>::err();
    stream_given_ = true;
    return Result<Own<io::streams::InputStream>, void>::ok(context_->input_streams->make_own(
        caller.store(), std::make_unique<RequestBodyStream>(context_, exchange_, alive_)));
  }
  // incoming-body.finish: the stream must be gone.
  std::unique_ptr<types::FutureTrailers> finish() {
    if (alive_.use_count() > 1) throw_trap("wasi:http incoming-body.finish: the body's input-stream is not dropped yet");
    return std::make_unique<HostFutureTrailers>(context_, exchange_);
  }

 private:
  std::shared_ptr<const TypesContext> context_;
  std::shared_ptr<ProxyExchange> exchange_;
  std::shared_ptr<const void> alive_ = std::make_shared<int>(0);
  bool stream_given_ = false;
};

class HostIncomingRequest final : public types::IncomingRequest {
 public:
  HostIncomingRequest(std::shared_ptr<const TypesContext> context, IncomingHead head,
                      std::shared_ptr<ProxyExchange> exchange)
      : context_(std::move(context)), head_(std::move(head)), exchange_(std::move(exchange)) {}

  types::Method method(Caller&) override { return method_of(head_.method); }
  std::optional<std::string> path_with_query(Caller&) override { return head_.path_with_query; }
  std::optional<types::Scheme> scheme(Caller&) override { return head_.scheme; }
  std::optional<std::string> authority(Caller&) override { return head_.authority; }
  std::unique_ptr<types::Headers> headers(Caller&) override { return immutable_fields(head_.headers); }
  Result<Own<types::IncomingBody>, void> consume(Caller& caller) override {
    if (consumed_) return Result<Own<types::IncomingBody>, void>::err();
    consumed_ = true;
    return Result<Own<types::IncomingBody>, void>::ok(context_->resources->incoming_body.make_own(
        caller.store(), std::make_unique<HostIncomingBody>(context_, exchange_)));
  }

 private:
  std::shared_ptr<const TypesContext> context_;
  IncomingHead head_;
  std::shared_ptr<ProxyExchange> exchange_;
  bool consumed_ = false;
};

// --- a response's body ---------------------------------------------------------

// What an outgoing-response's body writes, wherever the response is: held
// here until response-outparam.set gives it the exchange, then passed on.
struct ResponseBody {
  std::shared_ptr<ProxyExchange> exchange;
  std::string early;  // written before the response was set
  bool finished = false;
  std::vector<wire::Field> trailers;
  bool abandoned = false;  // dropped unfinished

  size_t room() const {
    if (exchange) return exchange->response_room();
    return early.size() >= ProxyExchange::kBufferBytes ? 0 : ProxyExchange::kBufferBytes - early.size();
  }
  bool write(std::string_view bytes) {
    if (exchange) return exchange->write_response(bytes);
    early.append(bytes);
    return true;
  }
  void finish(std::vector<wire::Field> fields) {
    finished = true;
    if (exchange) return exchange->end_response(std::move(fields));
    trailers = std::move(fields);
  }
  void abandon() {
    if (finished) return;
    abandoned = true;
    if (exchange) exchange->fail_response("the guest dropped the response body without finishing it");
  }
  // The response was set: what waited goes on.
  void attach(std::shared_ptr<ProxyExchange> to) {
    exchange = std::move(to);
    if (!early.empty()) exchange->write_response(early);
    early.clear();
    if (finished) exchange->end_response(std::move(trailers));
    if (abandoned) exchange->fail_response("the guest dropped the response body without finishing it");
  }
};

class ResponseBodyStream final : public io::streams::OutputStream {
 public:
  ResponseBodyStream(std::shared_ptr<ResponseBody> body, std::shared_ptr<const void> alive)
      : body_(std::move(body)), alive_(std::move(alive)) {}

  Result<uint64_t, StreamError> check_write(Caller&) override {
    if (gone()) return Result<uint64_t, StreamError>::err(io::streams::stream_error::Closed{});
    return Result<uint64_t, StreamError>::ok(body_->room());
  }
  WriteResult write(Caller&, std::vector<uint8_t> contents) override {
    if (gone()) return WriteResult::err(io::streams::stream_error::Closed{});
    if (contents.size() > body_->room()) throw_trap("wasi:io/streams: write of more than check-write allowed");
    return put(contents.data(), contents.size());
  }
  WriteResult blocking_write_and_flush(Caller& caller, std::vector<uint8_t> contents) override {
    if (contents.size() > 4096) throw_trap("wasi:io/streams: blocking-write-and-flush of more than 4096 bytes");
    if (!wait_for_room(caller, contents.size())) return WriteResult::err(io::streams::stream_error::Closed{});
    return put(contents.data(), contents.size());
  }
  WriteResult flush(Caller&) override {
    return gone() ? WriteResult::err(io::streams::stream_error::Closed{}) : WriteResult::ok();
  }
  WriteResult blocking_flush(Caller& caller) override { return flush(caller); }
  std::unique_ptr<io::poll::Pollable> subscribe(Caller&) override {
    if (body_->exchange) return std::make_unique<ExchangePollable>(body_->exchange->response_room_fd(), body_->exchange);
    // Before the response is set: ready while the body holds less than its bound.
    return std::make_unique<wasi::detail::Pollable>(body_->room() > 0 ? 0 : UINT64_MAX);
  }
  WriteResult write_zeroes(Caller&, uint64_t len) override {
    if (gone()) return WriteResult::err(io::streams::stream_error::Closed{});
    if (len > body_->room()) throw_trap("wasi:io/streams: write-zeroes of more than check-write allowed");
    const std::string zeroes(len, '\0');
    return put(reinterpret_cast<const uint8_t*>(zeroes.data()), zeroes.size());
  }
  WriteResult blocking_write_zeroes_and_flush(Caller& caller, uint64_t len) override {
    if (len > 4096) throw_trap("wasi:io/streams: blocking-write-zeroes-and-flush of more than 4096 bytes");
    if (!wait_for_room(caller, len)) return WriteResult::err(io::streams::stream_error::Closed{});
    const std::string zeroes(len, '\0');
    return put(reinterpret_cast<const uint8_t*>(zeroes.data()), zeroes.size());
  }
  CountResult splice(Caller& caller, io::streams::InputStream& src, uint64_t len) override {
    if (gone()) return CountResult::err(io::streams::stream_error::Closed{});
    return copy(src.read(caller, std::min<uint64_t>(len, body_->room())));
  }
  CountResult blocking_splice(Caller& caller, io::streams::InputStream& src, uint64_t len) override {
    if (!wait_for_room(caller, 1)) return CountResult::err(io::streams::stream_error::Closed{});
    return copy(src.blocking_read(caller, std::min<uint64_t>(len, body_->room())));
  }

 private:
  bool gone() const { return body_->exchange && body_->exchange->cancelled(); }
  WriteResult put(const uint8_t* data, size_t n) {
    if (!body_->write(std::string_view(reinterpret_cast<const char*>(data), n)))
      return WriteResult::err(io::streams::stream_error::Closed{});
    return WriteResult::ok();
  }
  CountResult copy(ReadResult read) {
    if (read.is_err()) return CountResult::err(std::move(read.error()));
    const WriteResult written = put(read.value().data(), read.value().size());
    if (written.is_err()) return CountResult::err(written.error());
    return CountResult::ok(read.value().size());
  }
  // False when the client is gone.
  bool wait_for_room(Caller& caller, size_t n) {
    while (body_->room() < n && !gone()) {
      if (!body_->exchange) throw_trap("wasi:io/streams: a blocking write to a response body full before its response was set");
      wait_readable(caller, body_->exchange->response_room_fd(), "a response body's blocking write");
    }
    return !gone();
  }

  std::shared_ptr<ResponseBody> body_;
  std::shared_ptr<const void> alive_;
};

class HostOutgoingBody final : public types::OutgoingBody {
 public:
  HostOutgoingBody(std::shared_ptr<const TypesContext> context, std::shared_ptr<ResponseBody> body)
      : context_(std::move(context)), body_(std::move(body)) {}
  ~HostOutgoingBody() override { body_->abandon(); }

  Result<Own<io::streams::OutputStream>, void> write(Caller& caller) override {
    if (stream_given_) return Result<Own<io::streams::OutputStream>, void>::err();
    stream_given_ = true;
    return Result<Own<io::streams::OutputStream>, void>::ok(
        context_->output_streams->make_own(caller.store(), std::make_unique<ResponseBodyStream>(body_, alive_)));
  }
  // outgoing-body.finish: the stream must be gone.
  void finish(std::vector<wire::Field> trailers) {
    if (alive_.use_count() > 1) throw_trap("wasi:http outgoing-body.finish: the body's output-stream is not dropped yet");
    body_->finish(std::move(trailers));
  }

 private:
  std::shared_ptr<const TypesContext> context_;
  std::shared_ptr<ResponseBody> body_;
  std::shared_ptr<const void> alive_ = std::make_shared<int>(0);
  bool stream_given_ = false;
};

class HostOutgoingResponse final : public types::OutgoingResponse {
 public:
  HostOutgoingResponse(std::shared_ptr<const TypesContext> context, FieldList headers)
      : context_(std::move(context)), headers_(std::move(headers)) {}

  types::StatusCode status_code(Caller&) override { return status_; }
  Result<void, void> set_status_code(Caller&, types::StatusCode value) override {
    if (value < 100 || value > 999) return Result<void, void>::err();
    status_ = value;
    return Result<void, void>::ok();
  }
  std::unique_ptr<types::Headers> headers(Caller&) override { return immutable_fields(headers_); }
  Result<Own<types::OutgoingBody>, void> body(Caller& caller) override {
    if (body_taken_) return Result<Own<types::OutgoingBody>, void>::err();
    body_taken_ = true;
    return Result<Own<types::OutgoingBody>, void>::ok(context_->resources->outgoing_body.make_own(
        caller.store(), std::make_unique<HostOutgoingBody>(context_, body_)));
  }

  // response-outparam.set with this response: its head goes out, its body follows.
  void send(const std::shared_ptr<ProxyExchange>& exchange) {
    exchange->set_response_head(ResponseHead{status_, headers_.entries()});
    if (!body_taken_) body_->finish({});  // a body never asked for is empty
    body_->attach(exchange);
  }

 private:
  std::shared_ptr<const TypesContext> context_;
  uint16_t status_ = 200;
  FieldList headers_;
  std::shared_ptr<ResponseBody> body_ = std::make_shared<ResponseBody>();
  bool body_taken_ = false;
};

class HostResponseOutparam final : public types::ResponseOutparam {
 public:
  explicit HostResponseOutparam(std::shared_ptr<ProxyExchange> exchange) : exchange(std::move(exchange)) {}
  std::shared_ptr<ProxyExchange> exchange;
};

// --- outgoing requests -----------------------------------------------------------

// RFC 3986 scheme; what a path with query or an authority may hold.
bool is_scheme(std::string_view text) {
  if (text.empty() || !std::isalpha(static_cast<unsigned char>(text[0]))) return false;
  return std::all_of(text.begin(), text.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '+' || c == '-' || c == '.';
  });
}
bool is_uri_part(std::string_view text, bool authority) {
  return std::all_of(text.begin(), text.end(), [authority](char c) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte <= 0x20 || byte >= 0x7f || c == '#') return false;
    return !(authority && (c == '/' || c == '?' || c == '@'));
  });
}

class HostOutgoingRequest final : public types::OutgoingRequest {
 public:
  HostOutgoingRequest(std::shared_ptr<const TypesContext> context, FieldList headers)
      : context_(std::move(context)), headers_(std::move(headers)) {}

  Result<Own<types::OutgoingBody>, void> body(Caller& caller) override {
    if (body_taken_) return Result<Own<types::OutgoingBody>, void>::err();
    body_taken_ = true;
    return Result<Own<types::OutgoingBody>, void>::ok(context_->resources->outgoing_body.make_own(
        caller.store(), std::make_unique<HostOutgoingBody>(context_, body_)));
  }
  types::Method method(Caller&) override { return method_; }
  Result<void, void> set_method(Caller&, types::Method value) override {
    if (const auto* other = std::get_if<types::method::Other>(&value); other && !is_field_name(other->value))
      return Result<void, void>::err();
    method_ = std::move(value);
    return Result<void, void>::ok();
  }
  std::optional<std::string> path_with_query(Caller&) override { return path_with_query_; }
  Result<void, void> set_path_with_query(Caller&, std::optional<std::string> value) override {
    if (value && !is_uri_part(*value, false)) return Result<void, void>::err();
    path_with_query_ = std::move(value);
    return Result<void, void>::ok();
  }
  std::optional<types::Scheme> scheme(Caller&) override { return scheme_; }
  Result<void, void> set_scheme(Caller&, std::optional<types::Scheme> value) override {
    if (value)
      if (const auto* other = std::get_if<types::scheme::Other>(&*value); other && !is_scheme(other->value))
        return Result<void, void>::err();
    scheme_ = std::move(value);
    return Result<void, void>::ok();
  }
  std::optional<std::string> authority(Caller&) override { return authority_; }
  Result<void, void> set_authority(Caller&, std::optional<std::string> value) override {
    if (value && !is_uri_part(*value, true)) return Result<void, void>::err();
    authority_ = std::move(value);
    return Result<void, void>::ok();
  }
  std::unique_ptr<types::Headers> headers(Caller&) override { return immutable_fields(headers_); }

 private:
  std::shared_ptr<const TypesContext> context_;
  FieldList headers_;
  types::Method method_ = types::method::Get{};
  std::optional<std::string> path_with_query_;
  std::optional<types::Scheme> scheme_;
  std::optional<std::string> authority_;
  std::shared_ptr<ResponseBody> body_ = std::make_shared<ResponseBody>();
  bool body_taken_ = false;
};

class HostRequestOptions final : public types::RequestOptions {
 public:
  std::optional<types::Duration> connect_timeout(Caller&) override { return connect_; }
  Result<void, void> set_connect_timeout(Caller&, std::optional<types::Duration> d) override { return change(connect_, d); }
  std::optional<types::Duration> first_byte_timeout(Caller&) override { return first_byte_; }
  Result<void, void> set_first_byte_timeout(Caller&, std::optional<types::Duration> d) override {
    return change(first_byte_, d);
  }
  std::optional<types::Duration> between_bytes_timeout(Caller&) override { return between_bytes_; }
  Result<void, void> set_between_bytes_timeout(Caller&, std::optional<types::Duration> d) override {
    return change(between_bytes_, d);
  }

 private:
  static Result<void, void> change(std::optional<uint64_t>& slot, std::optional<uint64_t> value) {
    slot = value;
    return Result<void, void>::ok();
  }
  std::optional<uint64_t> connect_, first_byte_, between_bytes_;
};

// --- the interfaces' functions -----------------------------------------------------

class TypesHost final : public types::Host, public wasi::bindings::wasi::http::outgoing_handler::Host {
 public:
  explicit TypesHost(std::shared_ptr<TypesContext> context) : context_(std::move(context)) {}

  std::optional<ErrorCode> http_error_code(Caller&, io::error::Error& error) override {
    if (auto* http = dynamic_cast<HttpIoError*>(&error)) return http->code;
    return std::nullopt;
  }
  std::unique_ptr<types::Fields> fields_new(Caller&) override {
    return std::make_unique<HostFields>(FieldList(context_->forbidden));
  }
  Result<Own<types::Fields>, types::HeaderError> fields_from_list(
      Caller& caller, std::vector<std::tuple<types::FieldName, types::FieldValue>> entries) override {
    std::vector<FieldList::Entry> list;
    for (auto& [name, value] : entries) list.emplace_back(std::move(name), text_of(value));
    auto made = FieldList::from_list(std::move(list), context_->forbidden);
    if (auto* error = std::get_if<FieldError>(&made))
      return Result<Own<types::Fields>, types::HeaderError>::err(header_error(*error));
    return Result<Own<types::Fields>, types::HeaderError>::ok(context_->resources->fields.make_own(
        caller.store(), std::make_unique<HostFields>(std::move(std::get<FieldList>(made)))));
  }
  std::unique_ptr<types::OutgoingRequest> outgoing_request_new(Caller& caller, Own<types::Headers> headers) override {
    return std::make_unique<HostOutgoingRequest>(context_, take_fields(caller.store(), headers));
  }
  std::unique_ptr<types::RequestOptions> request_options_new(Caller&) override {
    return std::make_unique<HostRequestOptions>();
  }
  void response_outparam_set(Caller& caller, Own<types::ResponseOutparam> param,
                             Result<Own<types::OutgoingResponse>, ErrorCode> response) override {
    Store& store = caller.store();
    const std::shared_ptr<ProxyExchange> exchange =
        static_cast<HostResponseOutparam&>(context_->resources->response_outparam.get(store, param)).exchange;
    store.drop(param);
    if (response.is_err()) {
      exchange->fail_response("the service answered with an error instead of a response");
      return;
    }
    const Own<types::OutgoingResponse> handle = response.value();
    static_cast<HostOutgoingResponse&>(context_->resources->outgoing_response.get(store, handle)).send(exchange);
    store.drop(handle);
  }
  std::unique_ptr<types::FutureTrailers> incoming_body_finish(Caller& caller, Own<types::IncomingBody> this_) override {
    Store& store = caller.store();
    auto trailers = static_cast<HostIncomingBody&>(context_->resources->incoming_body.get(store, this_)).finish();
    store.drop(this_);
    return trailers;
  }
  std::unique_ptr<types::OutgoingResponse> outgoing_response_new(Caller& caller, Own<types::Headers> headers) override {
    return std::make_unique<HostOutgoingResponse>(context_, take_fields(caller.store(), headers));
  }
  Result<void, ErrorCode> outgoing_body_finish(Caller& caller, Own<types::OutgoingBody> this_,
                                               std::optional<Own<types::Trailers>> trailers) override {
    Store& store = caller.store();
    std::vector<wire::Field> fields;
    if (trailers) fields = take_fields(store, *trailers).entries();
    static_cast<HostOutgoingBody&>(context_->resources->outgoing_body.get(store, this_)).finish(std::move(fields));
    store.drop(this_);
    return Result<void, ErrorCode>::ok();
  }

  // wasi:http/outgoing-handler
  Result<Own<types::FutureIncomingResponse>, ErrorCode> handle(
      Caller& caller, Own<types::OutgoingRequest> request, std::optional<Own<types::RequestOptions>> options) override {
    Store& store = caller.store();
    store.drop(request);
    if (options) store.drop(*options);
    if (!context_->config.allow_outgoing)
      return Result<Own<types::FutureIncomingResponse>, ErrorCode>::err(types::error_code::HTTPRequestDenied{});
    return Result<Own<types::FutureIncomingResponse>, ErrorCode>::err(
        types::error_code::InternalError{"cmhost: outgoing requests of wasi:http@0.2 are not supported yet"});
  }

 private:
  // Headers given to a constructor: the new object's from then on, immutable.
  FieldList take_fields(Store& store, Own<types::Fields> handle) {
    FieldList list = static_cast<HostFields&>(context_->resources->fields.get(store, handle)).list();
    store.drop(handle);
    list.make_immutable();
    return list;
  }

  std::shared_ptr<TypesContext> context_;
};

}  // namespace

namespace {

std::shared_ptr<TypesContext> new_context(const Linker& linker, const HttpConfig& config) {
  auto forbidden = std::make_shared<ForbiddenHeaders>();
  for (const std::string& name : config.forbidden_headers) forbidden->add(name);
  auto context = std::make_shared<TypesContext>();
  context->forbidden = std::move(forbidden);
  context->config = config;
  context->input_streams = linker.resource<io::streams::InputStream>("wasi:io/streams@0.2.12#input-stream");
  context->output_streams = linker.resource<io::streams::OutputStream>("wasi:io/streams@0.2.12#output-stream");
  context->errors = linker.resource<io::error::Error>("wasi:io/error@0.2.12#error");
  return context;
}

}  // namespace

std::shared_ptr<TypesContext> add_types(Linker& linker, const HttpConfig& config) {
  auto context = new_context(linker, config);
  auto host = std::make_shared<TypesHost>(context);
  context->resources = types::add_to_linker(linker, host);
  wasi::bindings::wasi::http::outgoing_handler::add_to_linker(linker, host);
  return context;
}

std::shared_ptr<TypesContext> types_of(const Linker& linker, const HttpConfig& config) {
  auto context = new_context(linker, config);
  const auto resource = [&linker]<class T>(const char* name, T*) {
    return linker.resource<T>(std::string("wasi:http/types@0.2.12#") + name);
  };
  context->resources = types::Resources{
      resource("fields", static_cast<types::Fields*>(nullptr)),
      resource("incoming-request", static_cast<types::IncomingRequest*>(nullptr)),
      resource("outgoing-request", static_cast<types::OutgoingRequest*>(nullptr)),
      resource("request-options", static_cast<types::RequestOptions*>(nullptr)),
      resource("response-outparam", static_cast<types::ResponseOutparam*>(nullptr)),
      resource("incoming-response", static_cast<types::IncomingResponse*>(nullptr)),
      resource("incoming-body", static_cast<types::IncomingBody*>(nullptr)),
      resource("future-trailers", static_cast<types::FutureTrailers*>(nullptr)),
      resource("outgoing-response", static_cast<types::OutgoingResponse*>(nullptr)),
      resource("outgoing-body", static_cast<types::OutgoingBody*>(nullptr)),
      resource("future-incoming-response", static_cast<types::FutureIncomingResponse*>(nullptr)),
  };
  return context;
}

Own<types::IncomingRequest> make_incoming_request(Store& store, const std::shared_ptr<const TypesContext>& context,
                                                 IncomingHead head, std::shared_ptr<ProxyExchange> exchange) {
  return context->resources->incoming_request.make_own(
      store, std::make_unique<HostIncomingRequest>(context, std::move(head), std::move(exchange)));
}

Own<types::ResponseOutparam> make_response_outparam(Store& store, const std::shared_ptr<const TypesContext>& context,
                                                   std::shared_ptr<ProxyExchange> exchange) {
  return context->resources->response_outparam.make_own(store,
                                                        std::make_unique<HostResponseOutparam>(std::move(exchange)));
}

types::Method method_of(const std::string& name) {
  if (name == "GET") return types::method::Get{};
  if (name == "HEAD") return types::method::Head{};
  if (name == "POST") return types::method::Post{};
  if (name == "PUT") return types::method::Put{};
  if (name == "DELETE") return types::method::Delete{};
  if (name == "CONNECT") return types::method::Connect{};
  if (name == "OPTIONS") return types::method::Options{};
  if (name == "TRACE") return types::method::Trace{};
  if (name == "PATCH") return types::method::Patch{};
  return types::method::Other{name};
}

}  // namespace cmhost::http::p2
