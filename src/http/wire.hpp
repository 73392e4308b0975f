// HTTP/1.1 on the wire, on Boost.Beast: a request parser fed the bytes a
// connection read (the server does its own non-blocking reads in the
// store's reactor, so Beast's parser is driven by hand rather than by
// Beast's own I/O), and the framing of responses: head, chunks, the last
// chunk with trailers.
#pragma once

#include <boost/beast/http/basic_parser.hpp>
#include <boost/beast/http/verb.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cmhost::http::wire {

using Field = std::pair<std::string, std::string>;  // name as sent, value

struct ParserLimits {
  size_t header_bytes = 64 * 1024;  // request line and fields
  size_t header_count = 100;
  uint64_t body_bytes = 64ull << 20;
};

// How a message's body is delimited.
enum class Framing { content_length, chunked, until_close };

// Why a request could not be parsed, and the status that says so.
struct ParseFailure {
  unsigned status;  // 400, 413, 431, 501
  std::string reason;
};

// One message (a request the server reads, a response the client reads):
// its head, then its body's bytes as they arrive (taken as the guest
// reads), then its trailers.
template <bool isRequest>
class MessageParser final : public boost::beast::http::basic_parser<isRequest> {
 public:
  explicit MessageParser(const ParserLimits& limits);

  // Parses what it can of `bytes`: how many it took. A failure is the
  // message's end; bytes past a complete message are the next one's.
  size_t feed(std::string_view bytes, std::optional<ParseFailure>& failure);
  // The peer closed: the end of a body delimited by the connection's end,
  // or a failure when the message is incomplete.
  void feed_end(std::optional<ParseFailure>& failure);

  bool head_done() const { return this->is_header_done(); }
  bool done() const { return this->is_done(); }
  const std::string& method() const { return method_; }
  const std::string& target() const { return target_; }
  unsigned status() const { return status_; }
  unsigned version() const { return version_; }
  const std::vector<Field>& fields() const { return fields_; }
  const std::vector<Field>& trailers() const { return trailers_; }
  // Body bytes parsed and not yet taken.
  std::string& body() { return body_; }
  const std::string& body() const { return body_; }

 private:
  void on_request_impl(boost::beast::http::verb, boost::beast::string_view method, boost::beast::string_view target,
                       int version, boost::beast::error_code& ec) override;
  void on_response_impl(int status, boost::beast::string_view reason, int version,
                        boost::beast::error_code& ec) override;
  void on_field_impl(boost::beast::http::field, boost::beast::string_view name, boost::beast::string_view value,
                     boost::beast::error_code& ec) override;
  void on_header_impl(boost::beast::error_code& ec) override;
  void on_body_init_impl(const boost::optional<std::uint64_t>& length, boost::beast::error_code& ec) override;
  std::size_t on_body_impl(boost::beast::string_view body, boost::beast::error_code& ec) override;
  void on_chunk_header_impl(std::uint64_t size, boost::beast::string_view extensions,
                            boost::beast::error_code& ec) override;
  std::size_t on_chunk_body_impl(std::uint64_t remain, boost::beast::string_view body,
                                 boost::beast::error_code& ec) override;
  void on_finish_impl(boost::beast::error_code& ec) override;

  ParserLimits limits_;
  std::string method_, target_;
  unsigned status_ = 0;
  unsigned version_ = 11;
  std::vector<Field> fields_, trailers_;
  std::string body_;
  bool too_many_fields_ = false;
};

using RequestParser = MessageParser<true>;
using ResponseParser = MessageParser<false>;

// A request's head as the client sends it (Beast's serializer).
std::string request_head(const std::string& method, const std::string& target, const std::vector<Field>& fields,
                         Framing framing, std::optional<uint64_t> content_length);

// The response's status line and fields (Transfer-Encoding or
// Content-Length and Connection as `framing` and `keep_alive` say), with
// Beast's serializer.
std::string response_head(unsigned status, const std::vector<Field>& fields, unsigned version, Framing framing,
                          std::optional<uint64_t> content_length, bool keep_alive);
// One chunk of a chunked body (none for empty data).
void append_chunk(std::string& out, std::string_view data);
// The last chunk, with the trailers.
void append_last_chunk(std::string& out, const std::vector<Field>& trailers);
// A whole response of the server's own (an error page), text/plain.
std::string simple_response(unsigned status, std::string_view body, bool keep_alive);

}  // namespace cmhost::http::wire
