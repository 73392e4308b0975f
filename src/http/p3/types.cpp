// wasi:http@0.3.0's types on host objects. Fields follow wasmtime's rules
// (http/fields.hpp): names lowercase, forbidden names refused, headers of
// a request or response immutable. A body's ends stay host ends until
// consume-body hands them to a guest; a request or response dropped
// unconsumed drops them with it.
#include "types.hpp"

#include <tuple>
#include <utility>
#include <vector>

#include "cmhost/error.hpp"
#include "http/methods.hpp"

namespace cmhost::http::p3 {

namespace {

using abi::typed::Result;

types::HeaderError header_error(FieldError error) {
  switch (error) {
    case FieldError::invalid_syntax: return types::header_error::InvalidSyntax{};
    case FieldError::forbidden: return types::header_error::Forbidden{};
    case FieldError::immutable: return types::header_error::Immutable{};
    case FieldError::size_exceeded: return types::header_error::SizeExceeded{};
  }
  return types::header_error::Other{};
}

Result<void, types::HeaderError> status_of(std::optional<FieldError> error) {
  if (error) return Result<void, types::HeaderError>::err(header_error(*error));
  return Result<void, types::HeaderError>::ok();
}

std::string text_of(const types::FieldValue& bytes) { return std::string(bytes.begin(), bytes.end()); }
types::FieldValue bytes_of(const std::string& text) { return types::FieldValue(text.begin(), text.end()); }

std::vector<types::FieldValue> values_of(const std::vector<std::string>& texts) {
  std::vector<types::FieldValue> out;
  out.reserve(texts.size());
  for (const std::string& text : texts) out.push_back(bytes_of(text));
  return out;
}

std::unique_ptr<types::Fields> immutable_fields(const FieldList& list) {
  FieldList copy = list;
  copy.make_immutable();
  return std::make_unique<HostFields>(std::move(copy));
}

// RFC 9110 token (a method), a scheme (RFC 3986: ALPHA *( ALPHA / DIGIT / "+" / "-" / "." )).
bool is_scheme(std::string_view text) {
  if (text.empty() || !std::isalpha(static_cast<unsigned char>(text[0]))) return false;
  for (const char c : text)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '+' && c != '-' && c != '.') return false;
  return true;
}

// What an origin-form path with query or an authority may hold: visible
// ASCII, none of the characters that would end it on the wire.
bool is_uri_part(std::string_view text, bool authority) {
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte <= 0x20 || byte >= 0x7f || c == '#') return false;
    if (authority && (c == '/' || c == '?' || c == '@')) return false;
  }
  return true;
}

class HostRequestOptions final : public types::RequestOptions {
 public:
  explicit HostRequestOptions(RequestOptionsValues values, bool immutable) : values_(values), immutable_(immutable) {}
  const RequestOptionsValues& values() const { return values_; }

  std::optional<types::Duration> get_connect_timeout(Caller&) override { return values_.connect_timeout; }
  Result<void, types::RequestOptionsError> set_connect_timeout(Caller&, std::optional<types::Duration> d) override {
    return change(values_.connect_timeout, d);
  }
  std::optional<types::Duration> get_first_byte_timeout(Caller&) override { return values_.first_byte_timeout; }
  Result<void, types::RequestOptionsError> set_first_byte_timeout(Caller&, std::optional<types::Duration> d) override {
    return change(values_.first_byte_timeout, d);
  }
  std::optional<types::Duration> get_between_bytes_timeout(Caller&) override { return values_.between_bytes_timeout; }
  Result<void, types::RequestOptionsError> set_between_bytes_timeout(Caller&,
                                                                     std::optional<types::Duration> d) override {
    return change(values_.between_bytes_timeout, d);
  }
  std::unique_ptr<types::RequestOptions> clone(Caller&) override {
    return std::make_unique<HostRequestOptions>(values_, false);
  }

 private:
  Result<void, types::RequestOptionsError> change(std::optional<uint64_t>& slot, std::optional<uint64_t> value) {
    if (immutable_) return Result<void, types::RequestOptionsError>::err(types::request_options_error::Immutable{});
    slot = value;
    return Result<void, types::RequestOptionsError>::ok();
  }
  RequestOptionsValues values_;
  bool immutable_;
};

// Hands a body's ends to the guest that consumes it. A guest-made body's
// `res` tells how the consumer did: it resolves the future its maker got
// from request.new or response.new.
std::tuple<Stream<uint8_t>, Future<TrailersResult>> consume(Store& store, Body& body,
                                                            std::optional<FutureWriter<TransmitResult>>& transmitted,
                                                            FutureReader<TransmitResult> res) {
  if (body.produce) return body.produce(store, std::move(res));
  Stream<uint8_t> contents;
  if (body.contents) {
    contents = body.contents->into_handle(store);
  } else {
    StreamWriter<uint8_t> none(store);
    contents = none.readable_handle();
    none.close();
  }
  if (transmitted) {
    auto reader = std::make_shared<FutureReader<TransmitResult>>(std::move(res));
    auto writer = std::make_shared<std::optional<FutureWriter<TransmitResult>>>(std::move(transmitted));
    transmitted.reset();
    // A consumer that drops its future without a word reports no failure.
    reader->start_read(store, [&store, reader, writer](std::optional<TransmitResult> outcome) {
      settle_transmit(store, *writer, outcome.value_or(TransmitResult::ok()));
    });
  }
  return {contents, body.trailers->into_handle(store)};
}

class TypesHost final : public types::Host {
 public:
  explicit TypesHost(std::shared_ptr<TypesContext> context) : context_(std::move(context)) {}

  std::unique_ptr<types::Fields> fields_new(Caller&) override {
    return std::make_unique<HostFields>(FieldList(context_->forbidden));
  }
  Result<Own<types::Fields>, types::HeaderError> fields_from_list(
      Caller& caller, std::vector<std::tuple<types::FieldName, types::FieldValue>> entries) override {
    std::vector<FieldList::Entry> list;
    list.reserve(entries.size());
    for (auto& [name, value] : entries) list.emplace_back(std::move(name), text_of(value));
    auto made = FieldList::from_list(std::move(list), context_->forbidden);
    if (auto* error = std::get_if<FieldError>(&made))
      return Result<Own<types::Fields>, types::HeaderError>::err(header_error(*error));
    return Result<Own<types::Fields>, types::HeaderError>::ok(context_->resources->fields.make_own(
        caller.store(), std::make_unique<HostFields>(std::move(std::get<FieldList>(made)))));
  }

  std::tuple<Own<types::Request>, Future<TransmitResult>> request_new_(
      Caller& caller, Own<types::Fields> headers, std::optional<Stream<uint8_t>> contents,
      FutureReader<TrailersResult> trailers, std::optional<Own<types::RequestOptions>> options) override {
    Store& store = caller.store();
    Body body = guest_body(store, contents, std::move(trailers));
    auto request = std::make_unique<HostRequest>(context_, take_fields(store, headers), std::move(body));
    if (options) {
      request->options = static_cast<HostRequestOptions&>(context_->resources->request_options.get(store, *options))
                             .values();
      store.drop(*options);
    }
    request->transmitted.emplace(store);
    const Future<TransmitResult> transmitted = request->transmitted->readable_handle();
    return {context_->resources->request.make_own(store, std::move(request)), transmitted};
  }

  std::tuple<Stream<uint8_t>, Future<TrailersResult>> request_consume_body(
      Caller& caller, Own<types::Request> this_, FutureReader<TransmitResult> res) override {
    Store& store = caller.store();
    auto request = take_request(store, *context_, this_);
    return consume(store, request->body, request->transmitted, std::move(res));
  }

  std::unique_ptr<types::RequestOptions> request_options_new(Caller&) override {
    return std::make_unique<HostRequestOptions>(RequestOptionsValues{}, false);
  }

  std::tuple<Own<types::Response>, Future<TransmitResult>> response_new_(
      Caller& caller, Own<types::Fields> headers, std::optional<Stream<uint8_t>> contents,
      FutureReader<TrailersResult> trailers) override {
    Store& store = caller.store();
    Body body = guest_body(store, contents, std::move(trailers));
    auto response = std::make_unique<HostResponse>(take_fields(store, headers), std::move(body));
    response->transmitted.emplace(store);
    const Future<TransmitResult> transmitted = response->transmitted->readable_handle();
    return {context_->resources->response.make_own(store, std::move(response)), transmitted};
  }

  std::tuple<Stream<uint8_t>, Future<TrailersResult>> response_consume_body(
      Caller& caller, Own<types::Response> this_, FutureReader<TransmitResult> res) override {
    Store& store = caller.store();
    auto response = take_response(store, *context_, this_);
    return consume(store, response->body, response->transmitted, std::move(res));
  }

 private:
  // Headers given to request.new or response.new: theirs from then on,
  // immutable (the fields handle is consumed).
  FieldList take_fields(Store& store, Own<types::Fields> handle) {
    FieldList list = static_cast<HostFields&>(context_->resources->fields.get(store, handle)).list();
    store.drop(handle);
    list.make_immutable();
    return list;
  }
  static Body guest_body(Store& store, std::optional<Stream<uint8_t>> contents, FutureReader<TrailersResult> trailers) {
    Body body;
    if (contents) body.contents.emplace(store, *contents);
    body.trailers.emplace(std::move(trailers));
    return body;
  }

  std::shared_ptr<TypesContext> context_;
};

}  // namespace

std::vector<types::FieldValue> HostFields::get(Caller&, types::FieldName name) { return values_of(list_.get(name)); }

bool HostFields::has(Caller&, types::FieldName name) { return list_.has(name); }

Result<void, types::HeaderError> HostFields::set(Caller&, types::FieldName name, std::vector<types::FieldValue> value) {
  std::vector<std::string> texts;
  texts.reserve(value.size());
  for (const auto& bytes : value) texts.push_back(text_of(bytes));
  return status_of(list_.set(name, std::move(texts)));
}

Result<void, types::HeaderError> HostFields::delete_(Caller&, types::FieldName name) {
  return status_of(list_.remove(name));
}

Result<std::vector<types::FieldValue>, types::HeaderError> HostFields::get_and_delete(Caller&, types::FieldName name) {
  auto taken = list_.get_and_remove(name);
  if (auto* error = std::get_if<FieldError>(&taken))
    return Result<std::vector<types::FieldValue>, types::HeaderError>::err(header_error(*error));
  return Result<std::vector<types::FieldValue>, types::HeaderError>::ok(
      values_of(std::get<std::vector<std::string>>(taken)));
}

Result<void, types::HeaderError> HostFields::append(Caller&, types::FieldName name, types::FieldValue value) {
  return status_of(list_.append(name, text_of(value)));
}

std::vector<std::tuple<types::FieldName, types::FieldValue>> HostFields::copy_all(Caller&) {
  std::vector<std::tuple<types::FieldName, types::FieldValue>> out;
  out.reserve(list_.entries().size());
  for (const auto& [name, value] : list_.entries()) out.emplace_back(name, bytes_of(value));
  return out;
}

std::unique_ptr<types::Fields> HostFields::clone(Caller&) { return std::make_unique<HostFields>(list_.mutable_copy()); }

Result<void, void> HostRequest::set_method(Caller&, types::Method value) {
  if (const auto* other = std::get_if<types::method::Other>(&value); other && !is_field_name(other->value))
    return Result<void, void>::err();
  method = std::move(value);
  return Result<void, void>::ok();
}

Result<void, void> HostRequest::set_path_with_query(Caller&, std::optional<std::string> value) {
  if (value && !is_uri_part(*value, false)) return Result<void, void>::err();
  path_with_query = std::move(value);
  return Result<void, void>::ok();
}

Result<void, void> HostRequest::set_scheme(Caller&, std::optional<types::Scheme> value) {
  if (value)
    if (const auto* other = std::get_if<types::scheme::Other>(&*value); other && !is_scheme(other->value))
      return Result<void, void>::err();
  scheme = std::move(value);
  return Result<void, void>::ok();
}

Result<void, void> HostRequest::set_authority(Caller&, std::optional<std::string> value) {
  if (value && !is_uri_part(*value, true)) return Result<void, void>::err();
  authority = std::move(value);
  return Result<void, void>::ok();
}

// The options as they were: the guest sees them immutable.
std::optional<Own<types::RequestOptions>> HostRequest::get_options(Caller& caller) {
  if (!options) return std::nullopt;
  return context_->resources->request_options.make_own(caller.store(),
                                                       std::make_unique<HostRequestOptions>(*options, true));
}

std::unique_ptr<types::Headers> HostRequest::get_headers(Caller&) { return immutable_fields(headers); }

Result<void, void> HostResponse::set_status_code(Caller&, types::StatusCode value) {
  if (value < 100 || value > 999) return Result<void, void>::err();
  status = value;
  return Result<void, void>::ok();
}

std::unique_ptr<types::Headers> HostResponse::get_headers(Caller&) { return immutable_fields(headers); }

std::shared_ptr<TypesContext> add_types(Linker& linker, const HttpConfig& config) {
  auto forbidden = std::make_shared<ForbiddenHeaders>();
  for (const std::string& name : config.forbidden_headers) forbidden->add(name);
  auto context = std::make_shared<TypesContext>();
  context->forbidden = std::move(forbidden);
  context->resources = types::add_to_linker(linker, std::make_shared<TypesHost>(context));
  return context;
}

std::string method_name(const types::Method& method) {
  return name_of_method<types::Method, types::method::Other>(method);
}

types::Method method_of(const std::string& name) { return method_of_name<types::Method, types::method::Other>(name); }

std::unique_ptr<HostResponse> take_response(Store& store, const TypesContext& context, Own<types::Response> handle) {
  auto taken =
      std::make_unique<HostResponse>(std::move(static_cast<HostResponse&>(context.resources->response.get(store, handle))));
  store.drop(handle);
  return taken;
}

std::unique_ptr<HostRequest> take_request(Store& store, const TypesContext& context, Own<types::Request> handle) {
  auto taken =
      std::make_unique<HostRequest>(std::move(static_cast<HostRequest&>(context.resources->request.get(store, handle))));
  store.drop(handle);
  return taken;
}

Own<types::Request> make_incoming_request(Store& store, const std::shared_ptr<const TypesContext>& context,
                                         std::unique_ptr<HostRequest> request) {
  return context->resources->request.make_own(store, std::move(request));
}

void settle_transmit(Store& store, std::optional<FutureWriter<TransmitResult>>& writer, TransmitResult outcome) {
  if (!writer) return;
  auto kept = std::make_shared<FutureWriter<TransmitResult>>(std::move(*writer));
  writer.reset();
  if (kept->busy() || kept->ended()) return;
  kept->start_write(store, std::move(outcome), [kept](CopyOutcome) {});
}

Own<types::Fields> make_fields(Store& store, const TypesContext& context, FieldList list) {
  list.make_immutable();
  return context.resources->fields.make_own(store, std::make_unique<HostFields>(std::move(list)));
}

}  // namespace cmhost::http::p3
