// wasi:http@0.2's types as host objects (types.cpp): fields over
// http/fields.hpp, and bodies as wasi:io streams and pollables (the WASI
// 0.2 implementation's resources, src/wasi/p2). A served request's body
// and its response go through a ProxyExchange (exchange.hpp) to the
// server's loop on another thread; nothing here runs on that loop.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "cmhost/cmhost.hpp"
#include "cmhost/http.hpp"
#include "http/fields.hpp"
#include "http/p2/exchange.hpp"
#include "wasi/p2/bindings.hpp"

namespace cmhost::http::p2 {

namespace types = ::cmhost::wasi::bindings::wasi::http::types;
namespace io = ::cmhost::wasi::bindings::wasi::io;
using abi::typed::Own;
using ErrorCode = types::ErrorCode;

// What the types of one linker share: the header rules, the outgoing
// requests' permission, and the resource types (their own and wasi:io's).
struct TypesContext {
  std::shared_ptr<const ForbiddenHeaders> forbidden;
  HttpConfig config;
  std::optional<types::Resources> resources;
  std::optional<HostResource<io::streams::InputStream>> input_streams;
  std::optional<HostResource<io::streams::OutputStream>> output_streams;
  std::optional<HostResource<io::error::Error>> errors;
};

// A request as the server hands it to a proxy's incoming-handler.
struct IncomingHead {
  std::string method;
  std::optional<std::string> path_with_query;
  std::optional<types::Scheme> scheme;
  std::optional<std::string> authority;
  FieldList headers;
};

// wasi:http/types@0.2.x and wasi:http/outgoing-handler@0.2.x on `linker`,
// which holds wasi:io's resources already (cmhost::wasi::add_to_linker).
std::shared_ptr<TypesContext> add_types(Linker& linker, const HttpConfig& config);
// The context of the types add_types put on `linker` (the server's, which
// is given the linker and the configuration only).
std::shared_ptr<TypesContext> types_of(const Linker& linker, const HttpConfig& config);

// The handle-call's arguments for one served request, in `store`.
Own<types::IncomingRequest> make_incoming_request(Store& store, const std::shared_ptr<const TypesContext>& context,
                                                 IncomingHead head, std::shared_ptr<ProxyExchange> exchange);
Own<types::ResponseOutparam> make_response_outparam(Store& store, const std::shared_ptr<const TypesContext>& context,
                                                   std::shared_ptr<ProxyExchange> exchange);

types::Method method_of(const std::string& name);

}  // namespace cmhost::http::p2
