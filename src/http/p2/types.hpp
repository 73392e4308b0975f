// wasi:http@0.2's types as host objects (types.cpp): fields over
// http/fields.hpp, and bodies as wasi:io streams and pollables (the WASI
// 0.2 implementation's resources, src/wasi/p2). A served request's body
// and its response go through a ProxyExchange (exchange.hpp) to the
// server's loop on another thread; nothing here runs on that loop.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

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

// A body coming in to a guest: a served request's (through its exchange)
// or the response to the guest's own request (from its connection). Never
// blocks: the guest's waits are on wait_fd.
class BodySource {
 public:
  using Read = ProxyExchange::Read;
  virtual ~BodySource() = default;
  // Up to `max` bytes appended to `out`.
  virtual Read read(size_t max, std::string& out) = 0;
  // Whether read would not answer `pending`.
  virtual bool readable() = 0;
  // What makes it readable: poll(2) events on a descriptor.
  virtual int wait_fd() const = 0;
  virtual short wait_events() const = 0;
  virtual std::vector<wire::Field> trailers() const = 0;
  virtual ErrorCode failure() const = 0;  // once read said `failed`
};

// Where a guest's outgoing-body goes: a served response's exchange, or the
// connection of the guest's own request.
class BodySink {
 public:
  virtual ~BodySink() = default;
  virtual size_t room() = 0;  // what write takes now
  virtual bool write(std::string_view bytes) = 0;  // false: the peer is gone
  virtual void finish(std::vector<wire::Field> trailers) = 0;
  virtual void abandon(std::string why) = 0;  // it cannot end well
  virtual bool gone() = 0;
  // What makes room: poll(2) events on a descriptor; -1 when only the
  // guest can (nothing to wait for).
  virtual int wait_fd() = 0;
  virtual short wait_events() = 0;
};

// An outgoing-body's sink until its message goes somewhere (a response is
// set, a request is handed to outgoing-handler): what the guest writes
// waits here (up to a bound), then goes on to the real sink.
class DeferredSink final : public BodySink {
 public:
  static constexpr size_t kBufferBytes = 256 * 1024;
  size_t room() override;
  bool write(std::string_view bytes) override;
  void finish(std::vector<wire::Field> trailers) override;
  void abandon(std::string why) override;
  bool gone() override { return to_ && to_->gone(); }
  int wait_fd() override { return to_ ? to_->wait_fd() : -1; }
  short wait_events() override { return to_ ? to_->wait_events() : 0; }
  // The message went: what waited goes on to `to`.
  void attach(std::shared_ptr<BodySink> to);
  bool finished() const { return finished_; }

 private:
  std::shared_ptr<BodySink> to_;
  std::string early_;
  bool finished_ = false;
  std::vector<wire::Field> trailers_;
  std::optional<std::string> abandoned_;  // why
};

// An outgoing-request taken apart (the handle dropped), for the client.
struct OutgoingRequestParts {
  types::Method method = types::method::Get{};
  std::optional<std::string> path_with_query;
  std::optional<types::Scheme> scheme;
  std::optional<std::string> authority;
  FieldList headers{nullptr};
  std::shared_ptr<DeferredSink> body;
  bool body_taken = false;  // the guest asked for the body: it ends with finish
};
OutgoingRequestParts take_outgoing_request(Store& store, const TypesContext& context,
                                           Own<types::OutgoingRequest> handle);
struct RequestTimeouts {
  std::optional<uint64_t> connect, first_byte, between_bytes;  // nanoseconds
};
RequestTimeouts take_request_options(Store& store, const TypesContext& context, Own<types::RequestOptions> handle);

// The guest's handles of bodies and headers, for the client (client.cpp).
Own<types::IncomingBody> make_incoming_body(Store& store, const std::shared_ptr<const TypesContext>& context,
                                            std::shared_ptr<BodySource> source);
std::unique_ptr<types::Fields> make_immutable_fields(FieldList list);

// A request as the server hands it to a proxy's incoming-handler.
struct IncomingHead {
  std::string method;
  std::optional<std::string> path_with_query;
  std::optional<types::Scheme> scheme;
  std::optional<std::string> authority;
  FieldList headers;
};

// Whether `linker` holds WASI 0.2's wasi:io resources (cmhost::wasi::add_to_linker).
bool has_wasi_io(const Linker& linker);
// wasi:http/types@0.2.x on `linker`, which holds wasi:io's resources.
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
