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
#include <charconv>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "cmhost/error.hpp"
#include "http/methods.hpp"
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

// Ready when a body source can be read: its descriptor is waited on, and
// asked again whenever poll looks.
class SourcePollable final : public wasi::detail::FdPollable {
 public:
  explicit SourcePollable(std::shared_ptr<BodySource> source)
      : FdPollable(source->wait_fd(), POLLIN, source), source_(std::move(source)) {}
  bool ready(Caller&) override { return source_->readable(); }
  int fd() const override { return source_->wait_fd(); }
  short events() const override { return source_->wait_events(); }

 private:
  std::shared_ptr<BodySource> source_;
};

// Ready when a body sink has room (or its peer is gone). Asked again at
// each poll: a deferred sink gets its descriptor once its message goes.
class SinkPollable final : public wasi::detail::FdPollable {
 public:
  explicit SinkPollable(std::shared_ptr<BodySink> sink)
      : FdPollable(sink->wait_fd(), POLLOUT, sink), sink_(std::move(sink)) {}
  bool ready(Caller&) override { return sink_->room() > 0 || sink_->gone(); }
  int fd() const override { return sink_->wait_fd(); }
  short events() const override { return sink_->wait_events(); }

 private:
  std::shared_ptr<BodySink> sink_;
};

// Waits until the source is readable, in slices so that the store's epoch
// deadline ends the wait.
void wait_readable(Caller& caller, BodySource& source, const char* what) {
  while (!source.readable()) {
    wasi::core::wait_for(source.wait_fd(), source.wait_events(), kWaitSliceMs);
    if (caller.store().interrupted())
      throw_trap(std::string("interrupted: the store's epoch deadline passed while ") + what + " waited");
  }
}

// A served request's body, as its exchange gives it.
class ExchangeSource final : public BodySource {
 public:
  explicit ExchangeSource(std::shared_ptr<ProxyExchange> exchange) : exchange_(std::move(exchange)) {}
  Read read(size_t max, std::string& out) override { return exchange_->read_request(max, out); }
  bool readable() override { return wasi::core::wait_for(exchange_->request_ready_fd(), POLLIN, 0); }
  int wait_fd() const override { return exchange_->request_ready_fd(); }
  short wait_events() const override { return POLLIN; }
  std::vector<wire::Field> trailers() const override { return exchange_->request_trailers(); }
  ErrorCode failure() const override {
    return error_of(exchange_->request_failure().value_or(RequestBodyFailure::connection_terminated));
  }

 private:
  std::shared_ptr<ProxyExchange> exchange_;
};

// --- bodies coming in ------------------------------------------------------------

class BodyInputStream final : public io::streams::InputStream {
 public:
  BodyInputStream(std::shared_ptr<const TypesContext> context, std::shared_ptr<BodySource> source,
                  std::shared_ptr<const void> alive)
      : context_(std::move(context)), source_(std::move(source)), alive_(std::move(alive)) {}

  ReadResult read(Caller& caller, uint64_t len) override { return take(caller, len, false); }
  ReadResult blocking_read(Caller& caller, uint64_t len) override { return take(caller, len, true); }
  CountResult skip(Caller& caller, uint64_t len) override { return counted(take(caller, len, false)); }
  CountResult blocking_skip(Caller& caller, uint64_t len) override { return counted(take(caller, len, true)); }
  std::unique_ptr<io::poll::Pollable> subscribe(Caller&) override { return std::make_unique<SourcePollable>(source_); }

 private:
  static CountResult counted(ReadResult r) {
    if (r.is_err()) return CountResult::err(std::move(r.error()));
    return CountResult::ok(r.value().size());
  }

  ReadResult take(Caller& caller, uint64_t len, bool block) {
    std::string out;
    for (;;) {
      switch (source_->read(std::min<uint64_t>(len, kMaxRead), out)) {
        case BodySource::Read::bytes: return ReadResult::ok(std::vector<uint8_t>(out.begin(), out.end()));
        case BodySource::Read::ended: return ReadResult::err(io::streams::stream_error::Closed{});
        case BodySource::Read::failed:
          return ReadResult::err(io::streams::stream_error::LastOperationFailed{
              context_->errors->make_own(caller.store(), std::make_unique<HttpIoError>(source_->failure()))});
        case BodySource::Read::pending:
          if (!block || len == 0) return ReadResult::ok();
          wait_readable(caller, *source_, "a body's blocking-read");
      }
    }
  }

  std::shared_ptr<const TypesContext> context_;
  std::shared_ptr<BodySource> source_;
  std::shared_ptr<const void> alive_;  // the body sees whether its stream is dropped
};

// The rest of a body once its stream is dropped: read and thrown away
// until the end, which brings the trailers. True once ended (or failed).
bool drain(BodySource& source) {
  std::string discarded;
  for (;;) {
    discarded.clear();
    const BodySource::Read read = source.read(kMaxRead, discarded);
    if (read == BodySource::Read::pending) return false;
    if (read != BodySource::Read::bytes) return true;
  }
}

class TrailersPollable final : public wasi::detail::FdPollable {
 public:
  explicit TrailersPollable(std::shared_ptr<BodySource> source)
      : FdPollable(source->wait_fd(), POLLIN, source), source_(std::move(source)) {}
  bool ready(Caller&) override { return drain(*source_); }
  int fd() const override { return source_->wait_fd(); }
  short events() const override { return source_->wait_events(); }

 private:
  std::shared_ptr<BodySource> source_;
};

class HostFutureTrailers final : public types::FutureTrailers {
 public:
  HostFutureTrailers(std::shared_ptr<const TypesContext> context, std::shared_ptr<BodySource> source)
      : context_(std::move(context)), source_(std::move(source)) {}

  std::unique_ptr<io::poll::Pollable> subscribe(Caller&) override {
    return std::make_unique<TrailersPollable>(source_);
  }
  std::optional<TrailersResult> get(Caller& caller) override {
    if (taken_) return TrailersResult::err();
    if (!drain(*source_)) return std::nullopt;
    taken_ = true;
    using Inner = Result<std::optional<Own<types::Trailers>>, ErrorCode>;
    std::string none;
    if (source_->read(0, none) == BodySource::Read::failed) return TrailersResult::ok(Inner::err(source_->failure()));
    const std::vector<wire::Field> trailers = source_->trailers();
    if (trailers.empty()) return TrailersResult::ok(Inner::ok(std::nullopt));
    FieldList list(context_->forbidden);
    for (const auto& [name, value] : trailers) list.add_from_host(name, value);
    list.make_immutable();
    return TrailersResult::ok(
        Inner::ok(context_->resources->fields.make_own(caller.store(), std::make_unique<HostFields>(std::move(list)))));
  }

 private:
  std::shared_ptr<const TypesContext> context_;
  std::shared_ptr<BodySource> source_;
  bool taken_ = false;
};

class HostIncomingBody final : public types::IncomingBody {
 public:
  HostIncomingBody(std::shared_ptr<const TypesContext> context, std::shared_ptr<BodySource> source)
      : context_(std::move(context)), source_(std::move(source)) {}

  Result<Own<io::streams::InputStream>, void> stream(Caller& caller) override {
    if (stream_given_) return Result<Own<io::streams::InputStream>, void>::err();
    stream_given_ = true;
    return Result<Own<io::streams::InputStream>, void>::ok(context_->input_streams->make_own(
        caller.store(), std::make_unique<BodyInputStream>(context_, source_, alive_)));
  }
  // incoming-body.finish: the stream must be gone.
  std::unique_ptr<types::FutureTrailers> finish() {
    if (alive_.use_count() > 1) throw_trap("wasi:http incoming-body.finish: the body's input-stream is not dropped yet");
    return std::make_unique<HostFutureTrailers>(context_, source_);
  }

 private:
  std::shared_ptr<const TypesContext> context_;
  std::shared_ptr<BodySource> source_;
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
    return Result<Own<types::IncomingBody>, void>::ok(
        make_incoming_body(caller.store(), context_, std::make_shared<ExchangeSource>(exchange_)));
  }

 private:
  std::shared_ptr<const TypesContext> context_;
  IncomingHead head_;
  std::shared_ptr<ProxyExchange> exchange_;
  bool consumed_ = false;
};

// --- bodies going out -------------------------------------------------------------

// A served response's body once it is set: its exchange.
class ExchangeSink final : public BodySink {
 public:
  explicit ExchangeSink(std::shared_ptr<ProxyExchange> exchange) : exchange_(std::move(exchange)) {}
  size_t room() override { return exchange_->response_room(); }
  bool write(std::string_view bytes) override { return exchange_->write_response(bytes); }
  void finish(std::vector<wire::Field> trailers) override { exchange_->end_response(std::move(trailers)); }
  void abandon(std::string why) override { exchange_->fail_response(std::move(why)); }
  bool gone() override { return exchange_->cancelled(); }
  int wait_fd() override { return exchange_->response_room_fd(); }
  short wait_events() override { return POLLIN; }

 private:
  std::shared_ptr<ProxyExchange> exchange_;
};

// An outgoing body's content-length against what the guest wrote: a body
// that breaks it fails, as wasmtime's do (the write past it, or finish).
struct BodyLength {
  std::optional<uint64_t> declared;
  bool of_response = true;  // which error-code a mismatch is
  uint64_t written = 0;

  bool over() const { return declared && written > *declared; }
  bool matches() const { return !declared || written == *declared; }
  ErrorCode mismatch() const {
    if (of_response) return types::error_code::HTTPResponseBodySize{written};
    return types::error_code::HTTPRequestBodySize{written};
  }
  std::string why() const {
    return "the guest's body of " + std::to_string(written) + " bytes breaks its content-length of " +
           std::to_string(declared.value_or(0));
  }
};

// The content-length a message's fields declare (none when it is no number:
// the head is refused where it goes).
std::optional<uint64_t> declared_length(const FieldList& fields) {
  for (const auto& [name, value] : fields.entries()) {
    if (name != "content-length") continue;
    uint64_t length = 0;
    const auto parsed = std::from_chars(value.data(), value.data() + value.size(), length);
    if (parsed.ec != std::errc() || parsed.ptr != value.data() + value.size()) return std::nullopt;
    return length;
  }
  return std::nullopt;
}

class BodyOutputStream final : public io::streams::OutputStream {
 public:
  BodyOutputStream(std::shared_ptr<const TypesContext> context, std::shared_ptr<BodySink> body,
                   std::shared_ptr<BodyLength> length, std::shared_ptr<const void> alive)
      : context_(std::move(context)), body_(std::move(body)), length_(std::move(length)), alive_(std::move(alive)) {}

  Result<uint64_t, StreamError> check_write(Caller&) override {
    if (gone()) return Result<uint64_t, StreamError>::err(io::streams::stream_error::Closed{});
    return Result<uint64_t, StreamError>::ok(body_->room());
  }
  WriteResult write(Caller& caller, std::vector<uint8_t> contents) override {
    if (gone()) return WriteResult::err(io::streams::stream_error::Closed{});
    if (contents.size() > body_->room()) throw_trap("wasi:io/streams: write of more than check-write allowed");
    return put(caller, contents.data(), contents.size());
  }
  WriteResult blocking_write_and_flush(Caller& caller, std::vector<uint8_t> contents) override {
    if (contents.size() > 4096) throw_trap("wasi:io/streams: blocking-write-and-flush of more than 4096 bytes");
    return put_waiting(caller, contents.data(), contents.size());
  }
  WriteResult flush(Caller&) override {
    return gone() ? WriteResult::err(io::streams::stream_error::Closed{}) : WriteResult::ok();
  }
  WriteResult blocking_flush(Caller& caller) override { return flush(caller); }
  std::unique_ptr<io::poll::Pollable> subscribe(Caller&) override {
    return std::make_unique<SinkPollable>(body_);
  }
  WriteResult write_zeroes(Caller& caller, uint64_t len) override {
    if (gone()) return WriteResult::err(io::streams::stream_error::Closed{});
    if (len > body_->room()) throw_trap("wasi:io/streams: write-zeroes of more than check-write allowed");
    const std::string zeroes(len, '\0');
    return put(caller, reinterpret_cast<const uint8_t*>(zeroes.data()), zeroes.size());
  }
  WriteResult blocking_write_zeroes_and_flush(Caller& caller, uint64_t len) override {
    if (len > 4096) throw_trap("wasi:io/streams: blocking-write-zeroes-and-flush of more than 4096 bytes");
    const std::string zeroes(len, '\0');
    return put_waiting(caller, reinterpret_cast<const uint8_t*>(zeroes.data()), zeroes.size());
  }
  CountResult splice(Caller& caller, io::streams::InputStream& src, uint64_t len) override {
    if (gone()) return CountResult::err(io::streams::stream_error::Closed{});
    return copy(caller, src.read(caller, std::min<uint64_t>(len, body_->room())));
  }
  CountResult blocking_splice(Caller& caller, io::streams::InputStream& src, uint64_t len) override {
    if (!wait_for_room(caller)) return CountResult::err(io::streams::stream_error::Closed{});
    return copy(caller, src.blocking_read(caller, std::min<uint64_t>(len, body_->room())));
  }

 private:
  // After a failed write the stream is closed, as wasi:io says.
  bool gone() const { return failed_ || body_->gone(); }
  // What fits the content-length goes on; a write past it fails.
  WriteResult put(Caller& caller, const uint8_t* data, size_t n) {
    const size_t fits = length_->declared ? std::min<uint64_t>(n, *length_->declared - std::min(*length_->declared,
                                                                                                  length_->written))
                                          : n;
    if (!body_->write(std::string_view(reinterpret_cast<const char*>(data), fits)))
      return WriteResult::err(io::streams::stream_error::Closed{});
    length_->written += n;
    if (length_->over()) {
      failed_ = true;
      return WriteResult::err(io::streams::stream_error::LastOperationFailed{
          context_->errors->make_own(caller.store(), std::make_unique<HttpIoError>(length_->mismatch()))});
    }
    return WriteResult::ok();
  }
  CountResult copy(Caller& caller, ReadResult read) {
    if (read.is_err()) return CountResult::err(std::move(read.error()));
    WriteResult written = put(caller, read.value().data(), read.value().size());
    if (written.is_err()) return CountResult::err(std::move(written.error()));
    return CountResult::ok(read.value().size());
  }
  // Writes all of it, as room comes (a piece at a time, as wasmtime does).
  WriteResult put_waiting(Caller& caller, const uint8_t* data, size_t n) {
    while (n > 0) {
      if (!wait_for_room(caller)) return WriteResult::err(io::streams::stream_error::Closed{});
      const size_t piece = std::min(n, body_->room());
      WriteResult written = put(caller, data, piece);
      if (written.is_err()) return written;
      data += piece;
      n -= piece;
    }
    return gone() ? WriteResult::err(io::streams::stream_error::Closed{}) : WriteResult::ok();
  }
  // Until there is room: false when the peer is gone.
  bool wait_for_room(Caller& caller) {
    while (body_->room() == 0 && !gone()) {
      if (body_->wait_fd() < 0) throw_trap("wasi:io/streams: a blocking write to a body that is full until it is sent");
      wasi::core::wait_for(body_->wait_fd(), body_->wait_events(), kWaitSliceMs);
      if (caller.store().interrupted())
        throw_trap("interrupted: the store's epoch deadline passed while a body's blocking write waited");
    }
    return !gone();
  }

  std::shared_ptr<const TypesContext> context_;
  std::shared_ptr<BodySink> body_;
  std::shared_ptr<BodyLength> length_;
  std::shared_ptr<const void> alive_;
  bool failed_ = false;
};

class HostOutgoingBody final : public types::OutgoingBody {
 public:
  HostOutgoingBody(std::shared_ptr<const TypesContext> context, std::shared_ptr<BodySink> body,
                   std::shared_ptr<BodyLength> length)
      : context_(std::move(context)), body_(std::move(body)), length_(std::move(length)) {}
  ~HostOutgoingBody() override { body_->abandon("the guest dropped its body without finishing it"); }

  Result<Own<io::streams::OutputStream>, void> write(Caller& caller) override {
    if (stream_given_) return Result<Own<io::streams::OutputStream>, void>::err();
    stream_given_ = true;
    return Result<Own<io::streams::OutputStream>, void>::ok(context_->output_streams->make_own(
        caller.store(), std::make_unique<BodyOutputStream>(context_, body_, length_, alive_)));
  }
  // outgoing-body.finish: the stream must be gone, the content-length met.
  Result<void, ErrorCode> finish(std::vector<wire::Field> trailers) {
    if (alive_.use_count() > 1) throw_trap("wasi:http outgoing-body.finish: the body's output-stream is not dropped yet");
    if (!length_->matches()) {
      body_->abandon(length_->why());
      return Result<void, ErrorCode>::err(length_->mismatch());
    }
    body_->finish(std::move(trailers));
    return Result<void, ErrorCode>::ok();
  }

 private:
  std::shared_ptr<const TypesContext> context_;
  std::shared_ptr<BodySink> body_;
  std::shared_ptr<BodyLength> length_;
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
        caller.store(), std::make_unique<HostOutgoingBody>(context_, body_, length_)));
  }

  // response-outparam.set with this response: its head goes out, its body follows.
  void send(const std::shared_ptr<ProxyExchange>& exchange) {
    exchange->set_response_head(ResponseHead{status_, headers_.entries()});
    if (!body_taken_) body_->finish({});  // a body never asked for is empty
    body_->attach(std::make_shared<ExchangeSink>(exchange));
  }

 private:
  std::shared_ptr<const TypesContext> context_;
  uint16_t status_ = 200;
  FieldList headers_;
  std::shared_ptr<DeferredSink> body_ = std::make_shared<DeferredSink>();
  std::shared_ptr<BodyLength> length_ = std::make_shared<BodyLength>(BodyLength{declared_length(headers_), true});
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
      : context_(std::move(context)) {
    parts.headers = std::move(headers);
    parts.body = std::make_shared<DeferredSink>();
  }

  Result<Own<types::OutgoingBody>, void> body(Caller& caller) override {
    if (parts.body_taken) return Result<Own<types::OutgoingBody>, void>::err();
    parts.body_taken = true;
    return Result<Own<types::OutgoingBody>, void>::ok(context_->resources->outgoing_body.make_own(
        caller.store(), std::make_unique<HostOutgoingBody>(
                            context_, parts.body, std::make_shared<BodyLength>(BodyLength{declared_length(parts.headers), false}))));
  }
  types::Method method(Caller&) override { return parts.method; }
  Result<void, void> set_method(Caller&, types::Method value) override {
    if (const auto* other = std::get_if<types::method::Other>(&value); other && !is_field_name(other->value))
      return Result<void, void>::err();
    parts.method = std::move(value);
    return Result<void, void>::ok();
  }
  std::optional<std::string> path_with_query(Caller&) override { return parts.path_with_query; }
  Result<void, void> set_path_with_query(Caller&, std::optional<std::string> value) override {
    if (value && !is_uri_part(*value, false)) return Result<void, void>::err();
    parts.path_with_query = std::move(value);
    return Result<void, void>::ok();
  }
  std::optional<types::Scheme> scheme(Caller&) override { return parts.scheme; }
  Result<void, void> set_scheme(Caller&, std::optional<types::Scheme> value) override {
    if (value)
      if (const auto* other = std::get_if<types::scheme::Other>(&*value); other && !is_scheme(other->value))
        return Result<void, void>::err();
    parts.scheme = std::move(value);
    return Result<void, void>::ok();
  }
  std::optional<std::string> authority(Caller&) override { return parts.authority; }
  Result<void, void> set_authority(Caller&, std::optional<std::string> value) override {
    if (value && !is_uri_part(*value, true)) return Result<void, void>::err();
    parts.authority = std::move(value);
    return Result<void, void>::ok();
  }
  std::unique_ptr<types::Headers> headers(Caller&) override { return immutable_fields(parts.headers); }

  OutgoingRequestParts parts;

 private:
  std::shared_ptr<const TypesContext> context_;
};

class HostRequestOptions final : public types::RequestOptions {
 public:
  std::optional<types::Duration> connect_timeout(Caller&) override { return timeouts.connect; }
  Result<void, void> set_connect_timeout(Caller&, std::optional<types::Duration> d) override {
    return change(timeouts.connect, d);
  }
  std::optional<types::Duration> first_byte_timeout(Caller&) override { return timeouts.first_byte; }
  Result<void, void> set_first_byte_timeout(Caller&, std::optional<types::Duration> d) override {
    return change(timeouts.first_byte, d);
  }
  std::optional<types::Duration> between_bytes_timeout(Caller&) override { return timeouts.between_bytes; }
  Result<void, void> set_between_bytes_timeout(Caller&, std::optional<types::Duration> d) override {
    return change(timeouts.between_bytes, d);
  }

  RequestTimeouts timeouts;

 private:
  static Result<void, void> change(std::optional<uint64_t>& slot, std::optional<uint64_t> value) {
    slot = value;
    return Result<void, void>::ok();
  }
};

// --- the interfaces' functions -----------------------------------------------------

class TypesHost final : public types::Host {
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
    Result<void, ErrorCode> finished =
        static_cast<HostOutgoingBody&>(context_->resources->outgoing_body.get(store, this_)).finish(std::move(fields));
    store.drop(this_);
    return finished;
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

bool has_wasi_io(const Linker& linker) {
  try {
    linker.resource<io::streams::InputStream>("wasi:io/streams@0.2.12#input-stream");
    return true;
  } catch (const Error&) {
    return false;
  }
}

std::shared_ptr<TypesContext> add_types(Linker& linker, const HttpConfig& config) {
  auto context = new_context(linker, config);
  context->resources = types::add_to_linker(linker, std::make_shared<TypesHost>(context));
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

size_t DeferredSink::room() {
  if (to_) return to_->room();
  return early_.size() >= kBufferBytes ? 0 : kBufferBytes - early_.size();
}

bool DeferredSink::write(std::string_view bytes) {
  if (to_) return to_->write(bytes);
  early_.append(bytes);
  return true;
}

void DeferredSink::finish(std::vector<wire::Field> trailers) {
  finished_ = true;
  if (to_) return to_->finish(std::move(trailers));
  trailers_ = std::move(trailers);
}

void DeferredSink::abandon(std::string why) {
  if (finished_ || abandoned_) return;
  abandoned_ = std::move(why);
  if (to_) to_->abandon(*abandoned_);
}

void DeferredSink::attach(std::shared_ptr<BodySink> to) {
  to_ = std::move(to);
  if (!early_.empty()) to_->write(early_);
  early_.clear();
  if (finished_) to_->finish(std::move(trailers_));
  if (abandoned_) to_->abandon(*abandoned_);
}

OutgoingRequestParts take_outgoing_request(Store& store, const TypesContext& context,
                                           Own<types::OutgoingRequest> handle) {
  OutgoingRequestParts parts =
      std::move(static_cast<HostOutgoingRequest&>(context.resources->outgoing_request.get(store, handle)).parts);
  store.drop(handle);
  return parts;
}

RequestTimeouts take_request_options(Store& store, const TypesContext& context, Own<types::RequestOptions> handle) {
  const RequestTimeouts timeouts =
      static_cast<HostRequestOptions&>(context.resources->request_options.get(store, handle)).timeouts;
  store.drop(handle);
  return timeouts;
}

Own<types::IncomingBody> make_incoming_body(Store& store, const std::shared_ptr<const TypesContext>& context,
                                            std::shared_ptr<BodySource> source) {
  return context->resources->incoming_body.make_own(store,
                                                    std::make_unique<HostIncomingBody>(context, std::move(source)));
}

std::unique_ptr<types::Fields> make_immutable_fields(FieldList list) { return immutable_fields(list); }

types::Method method_of(const std::string& name) { return method_of_name<types::Method, types::method::Other>(name); }

}  // namespace cmhost::http::p2
