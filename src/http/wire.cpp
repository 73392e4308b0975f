#include "wire.hpp"

#include <boost/beast/core/buffers_range.hpp>
#include <boost/beast/http/chunk_encode.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/fields.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/serializer.hpp>
#include <boost/beast/http/string_body.hpp>

#include "cmhost/error.hpp"

namespace cmhost::http::wire {

namespace beast = boost::beast;
namespace bhttp = boost::beast::http;

namespace {

std::string text(beast::string_view view) { return std::string(view.data(), view.size()); }

ParseFailure failure_of(const beast::error_code& ec, bool too_many_fields) {
  if (too_many_fields) return {431, "too many header fields"};
  if (ec == bhttp::error::header_limit) return {431, "request header fields too large"};
  if (ec == bhttp::error::body_limit) return {413, "request body too large"};
  if (ec == bhttp::error::bad_version) return {505, "HTTP version not supported"};
  return {400, ec.message()};
}

// Appends what a serializer gives until `finished` holds.
template <class Serializer, class Finished>
void drain(Serializer& serializer, std::string& out, Finished finished) {
  beast::error_code ec;
  while (!finished()) {
    serializer.next(ec, [&](beast::error_code&, const auto& buffers) {
      size_t n = 0;
      for (const auto buffer : beast::buffers_range_ref(buffers)) {
        out.append(static_cast<const char*>(buffer.data()), buffer.size());
        n += buffer.size();
      }
      serializer.consume(n);
    });
    if (ec) throw Error(ErrorKind::InvalidValue, "cannot serialize an HTTP response: " + ec.message());
  }
}

template <class Buffers>
void append_buffers(std::string& out, const Buffers& buffers) {
  for (const auto buffer : beast::buffers_range_ref(buffers))
    out.append(static_cast<const char*>(buffer.data()), buffer.size());
}

}  // namespace

template <bool isRequest>
MessageParser<isRequest>::MessageParser(const ParserLimits& limits) : limits_(limits) {
  this->header_limit(static_cast<std::uint32_t>(std::min<size_t>(limits.header_bytes, UINT32_MAX)));
  this->body_limit(limits.body_bytes);
  this->eager(true);
}

template <bool isRequest>
size_t MessageParser<isRequest>::feed(std::string_view bytes, std::optional<ParseFailure>& failure) {
  size_t taken = 0;
  while (taken < bytes.size() && !this->is_done()) {
    beast::error_code ec;
    const size_t n = this->put(boost::asio::const_buffer(bytes.data() + taken, bytes.size() - taken), ec);
    taken += n;
    if (ec == bhttp::error::need_more) break;
    if (ec) {
      failure = failure_of(ec, too_many_fields_);
      break;
    }
    if (n == 0) break;
  }
  return taken;
}

template <bool isRequest>
void MessageParser<isRequest>::feed_end(std::optional<ParseFailure>& failure) {
  if (this->is_done()) return;
  beast::error_code ec;
  this->put_eof(ec);
  if (ec) failure = failure_of(ec, false);
}

template <bool isRequest>
void MessageParser<isRequest>::on_request_impl(bhttp::verb, beast::string_view method, beast::string_view target,
                                               int version, beast::error_code& ec) {
  if (!isRequest || (version != 10 && version != 11)) {
    ec = bhttp::error::bad_version;
    return;
  }
  method_ = text(method);
  target_ = text(target);
  version_ = static_cast<unsigned>(version);
}

template <bool isRequest>
void MessageParser<isRequest>::on_response_impl(int status, beast::string_view, int version, beast::error_code& ec) {
  if (isRequest || (version != 10 && version != 11)) {
    ec = bhttp::error::bad_version;
    return;
  }
  status_ = static_cast<unsigned>(status);
  version_ = static_cast<unsigned>(version);
}

template <bool isRequest>
void MessageParser<isRequest>::on_field_impl(bhttp::field, beast::string_view name, beast::string_view value,
                                  beast::error_code& ec) {
  // Fields after the head are the chunked body's trailers.
  std::vector<Field>& into = this->is_header_done() ? trailers_ : fields_;
  if (into.size() >= limits_.header_count) {
    too_many_fields_ = true;
    ec = bhttp::error::header_limit;
    return;
  }
  into.emplace_back(text(name), text(value));
}

template <bool isRequest>
void MessageParser<isRequest>::on_header_impl(beast::error_code&) {}

template <bool isRequest>
void MessageParser<isRequest>::on_body_init_impl(const boost::optional<std::uint64_t>&, beast::error_code&) {}

template <bool isRequest>
std::size_t MessageParser<isRequest>::on_body_impl(beast::string_view body, beast::error_code&) {
  body_.append(body.data(), body.size());
  return body.size();
}

template <bool isRequest>
void MessageParser<isRequest>::on_chunk_header_impl(std::uint64_t, beast::string_view, beast::error_code&) {}

template <bool isRequest>
std::size_t MessageParser<isRequest>::on_chunk_body_impl(std::uint64_t, beast::string_view body, beast::error_code&) {
  body_.append(body.data(), body.size());
  return body.size();
}

template <bool isRequest>
void MessageParser<isRequest>::on_finish_impl(beast::error_code&) {}

template class MessageParser<true>;
template class MessageParser<false>;

std::string request_head(const std::string& method, const std::string& target, const std::vector<Field>& fields,
                         Framing framing, std::optional<uint64_t> content_length) {
  bhttp::request<bhttp::empty_body> request{bhttp::string_to_verb(method), target, 11};
  if (request.method() == bhttp::verb::unknown) request.method_string(method);
  for (const auto& [name, value] : fields) request.insert(name, value);
  if (framing == Framing::chunked) request.chunked(true);
  if (framing == Framing::content_length && content_length) request.content_length(*content_length);
  bhttp::request_serializer<bhttp::empty_body> serializer{request};
  serializer.split(true);
  std::string out;
  drain(serializer, out, [&] { return serializer.is_header_done(); });
  return out;
}

std::string response_head(unsigned status, const std::vector<Field>& fields, unsigned version, Framing framing,
                          std::optional<uint64_t> content_length, bool keep_alive) {
  bhttp::response<bhttp::empty_body> response{static_cast<bhttp::status>(status), version};
  for (const auto& [name, value] : fields) response.insert(name, value);
  if (framing == Framing::chunked) response.chunked(true);
  if (framing == Framing::content_length) response.content_length(content_length.value_or(0));
  response.keep_alive(keep_alive);
  bhttp::response_serializer<bhttp::empty_body> serializer{response};
  serializer.split(true);
  std::string out;
  drain(serializer, out, [&] { return serializer.is_header_done(); });
  return out;
}

void append_chunk(std::string& out, std::string_view data) {
  if (data.empty()) return;
  append_buffers(out, bhttp::make_chunk(boost::asio::const_buffer(data.data(), data.size())));
}

void append_last_chunk(std::string& out, const std::vector<Field>& trailers) {
  if (trailers.empty()) {
    append_buffers(out, bhttp::make_chunk_last());
    return;
  }
  bhttp::fields fields;
  for (const auto& [name, value] : trailers) fields.insert(name, value);
  append_buffers(out, bhttp::make_chunk_last(fields));
}

std::string simple_response(unsigned status, std::string_view body, bool keep_alive) {
  bhttp::response<bhttp::string_body> response{static_cast<bhttp::status>(status), 11};
  response.set(bhttp::field::content_type, "text/plain; charset=utf-8");
  response.body() = std::string(body);
  response.keep_alive(keep_alive);
  response.prepare_payload();
  bhttp::response_serializer<bhttp::string_body> serializer{response};
  std::string out;
  drain(serializer, out, [&] { return serializer.is_done(); });
  return out;
}

}  // namespace cmhost::http::wire
