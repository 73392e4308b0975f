// wasi:http@0.3.0's types as host objects (types.cpp): fields over
// http/fields.hpp, requests and responses holding their body's stream and
// trailers, request options. The server (server.cpp) and the client make
// and take them through what is declared here.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "cmhost/cmhost.hpp"
#include "cmhost/http.hpp"
#include "cmhost/streams.hpp"
#include "http/fields.hpp"
#include "http/p3/bindings.hpp"

namespace cmhost::http::p3 {

namespace types = bindings::p3::wasi::http::types;
using abi::typed::Future;
using abi::typed::Own;
using abi::typed::Stream;
using ErrorCode = types::ErrorCode;
using TrailersResult = abi::typed::Result<std::optional<Own<types::Fields>>, ErrorCode>;
using TransmitResult = abi::typed::Result<void, ErrorCode>;

// What the types of one linker share: the header rules and the resource
// types add_to_linker defined (set once defined, before any object exists).
struct TypesContext {
  std::shared_ptr<const ForbiddenHeaders> forbidden;
  std::optional<types::Resources> resources;
};

class HostFields final : public types::Fields {
 public:
  explicit HostFields(FieldList list) : list_(std::move(list)) {}
  const FieldList& list() const { return list_; }

  std::vector<types::FieldValue> get(Caller&, types::FieldName name) override;
  bool has(Caller&, types::FieldName name) override;
  abi::typed::Result<void, types::HeaderError> set(Caller&, types::FieldName name,
                                                   std::vector<types::FieldValue> value) override;
  abi::typed::Result<void, types::HeaderError> delete_(Caller&, types::FieldName name) override;
  abi::typed::Result<std::vector<types::FieldValue>, types::HeaderError> get_and_delete(Caller&,
                                                                                       types::FieldName name) override;
  abi::typed::Result<void, types::HeaderError> append(Caller&, types::FieldName name, types::FieldValue value) override;
  std::vector<std::tuple<types::FieldName, types::FieldValue>> copy_all(Caller&) override;
  std::unique_ptr<types::Fields> clone(Caller&) override;

 private:
  FieldList list_;
};

// A body as a request or response carries it until consumed: the ends a
// guest gave (request.new, response.new: its contents, none when empty, and
// its trailers), or, for an incoming request, what makes the ends when the
// guest asks for them (the server's writers, made on consume-body only, so
// a request dropped unread leaves nothing behind).
class IncomingBody;  // bodies.hpp
struct Body {
  std::optional<StreamReader<uint8_t>> contents;
  std::optional<FutureReader<TrailersResult>> trailers;
  // An incoming request's: makes the stream and the trailers' future,
  // given the `res` future consume-body received (how the guest's
  // processing of the body went).
  std::function<std::tuple<Stream<uint8_t>, Future<TrailersResult>>(Store&, FutureReader<TransmitResult> res)> produce;
  // The same incoming body, for a message the guest passes on whole
  // (never consumed): a body going out takes it from there directly.
  std::shared_ptr<IncomingBody> unconsumed;
};

struct RequestOptionsValues {
  std::optional<uint64_t> connect_timeout, first_byte_timeout, between_bytes_timeout;
};

class HostRequest final : public types::Request {
 public:
  HostRequest(std::shared_ptr<const TypesContext> context, FieldList headers, Body body)
      : headers(std::move(headers)), body(std::move(body)), context_(std::move(context)) {}

  types::Method method = types::method::Get{};
  std::optional<std::string> path_with_query;
  std::optional<types::Scheme> scheme;
  std::optional<std::string> authority;
  std::optional<RequestOptionsValues> options;
  FieldList headers;
  Body body;
  // The future request.new returned: how sending it went (the client writes it).
  std::optional<FutureWriter<TransmitResult>> transmitted;

  types::Method get_method(Caller&) override { return method; }
  abi::typed::Result<void, void> set_method(Caller&, types::Method value) override;
  std::optional<std::string> get_path_with_query(Caller&) override { return path_with_query; }
  abi::typed::Result<void, void> set_path_with_query(Caller&, std::optional<std::string> value) override;
  std::optional<types::Scheme> get_scheme(Caller&) override { return scheme; }
  abi::typed::Result<void, void> set_scheme(Caller&, std::optional<types::Scheme> value) override;
  std::optional<std::string> get_authority(Caller&) override { return authority; }
  abi::typed::Result<void, void> set_authority(Caller&, std::optional<std::string> value) override;
  std::optional<Own<types::RequestOptions>> get_options(Caller& caller) override;
  std::unique_ptr<types::Headers> get_headers(Caller&) override;

 private:
  std::shared_ptr<const TypesContext> context_;
};

class HostResponse final : public types::Response {
 public:
  HostResponse(FieldList headers, Body body) : headers(std::move(headers)), body(std::move(body)) {}

  uint16_t status = 200;
  FieldList headers;
  Body body;
  // The future response.new returned: how sending it went (the server writes it).
  std::optional<FutureWriter<TransmitResult>> transmitted;

  types::StatusCode get_status_code(Caller&) override { return status; }
  abi::typed::Result<void, void> set_status_code(Caller&, types::StatusCode value) override;
  std::unique_ptr<types::Headers> get_headers(Caller&) override;
};

// The element type of a trailers future: result<option<trailers>, error-code>.
inline abi::TypeRef trailers_type(const TypesContext& context) {
  return abi::Type::result(abi::Type::option(abi::Type::own(context.resources->fields.type())),
                           abi::typed::wit_type<ErrorCode>());
}

// wasi:http/types@0.3.0 on `linker`; the context's resources are set.
std::shared_ptr<TypesContext> add_types(Linker& linker, const HttpConfig& config);

// The method as the wire spells it, and back (a method that is none of
// the WIT's cases is `other`).
std::string method_name(const types::Method& method);
types::Method method_of(const std::string& name);

// Takes the object behind an own handle out of the store's table (the
// handle is dropped; its state lives on in the returned object).
std::unique_ptr<HostResponse> take_response(Store& store, const TypesContext& context, Own<types::Response> handle);
std::unique_ptr<HostRequest> take_request(Store& store, const TypesContext& context, Own<types::Request> handle);
// A new request from the wire, as the server hands it to a guest.
Own<types::Request> make_incoming_request(Store& store, const std::shared_ptr<const TypesContext>& context,
                                         std::unique_ptr<HostRequest> request);
// New fields the guest may not change (an incoming request's trailers).
Own<types::Fields> make_fields(Store& store, const TypesContext& context, FieldList list);
// Resolves the future request.new or response.new returned with how the
// sending went, once (later calls do nothing); the writer lives on until
// the guest reads it. Guests' runtimes take a dropped one for a bug, so
// every path that ends a request or response settles it.
void settle_transmit(Store& store, std::optional<FutureWriter<TransmitResult>>& writer, TransmitResult outcome);
// The error-code of an internal failure, with its message.
inline ErrorCode internal_error(std::string message) { return types::error_code::InternalError{std::move(message)}; }

}  // namespace cmhost::http::p3
