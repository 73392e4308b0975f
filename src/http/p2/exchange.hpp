// One request of a wasi:http@0.2 proxy as two threads share it: the
// server's loop (the connection: parsing, framing, sending) and the worker
// thread that runs the guest in a store of its own. The request's body
// goes loop -> worker, the response's head, body and end worker -> loop,
// each through a bounded buffer: the loop stops reading the connection
// while the guest has not taken enough, and the guest's check-write says
// how much room is left. Readiness crosses the threads through eventfds:
// two level-triggered ones the guest's pollables wait on (request bytes to
// read, response room to write), one the loop's reactor watches.
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "http/wire.hpp"

namespace cmhost::http::p2 {

// Why a request's body cannot end.
enum class RequestBodyFailure { body_size, connection_terminated };

struct ResponseHead {
  unsigned status = 200;
  std::vector<wire::Field> fields;  // lowercase names, as the guest's fields hold them
};

// What the worker posted since the loop last looked.
struct Posted {
  std::optional<ResponseHead> head;  // once
  std::string body;                  // bytes of the body, in order
  bool body_ended = false;           // after `body`: the end, with these trailers
  std::vector<wire::Field> trailers;
  std::optional<std::string> failure;  // the response cannot be given: why
  bool worker_done = false;            // the guest returned (or trapped: `failure`)
};

class ProxyExchange {
 public:
  // Bytes each direction holds before the writer waits.
  static constexpr size_t kBufferBytes = 256 * 1024;

  ProxyExchange();  // Error (Usage) when the kernel has no eventfd to give
  ~ProxyExchange();
  ProxyExchange(const ProxyExchange&) = delete;
  ProxyExchange& operator=(const ProxyExchange&) = delete;

  // ---- the loop's side ------------------------------------------------------
  // Readable when the worker posted something or took request bytes; the
  // loop clears it, then takes what was posted.
  int loop_fd() const { return loop_fd_; }
  void clear_loop_fd();
  void add_request_bytes(std::string_view bytes);
  void end_request(std::vector<wire::Field> trailers);
  void fail_request(RequestBodyFailure why);
  size_t request_buffered() const;
  // At most `max_body` bytes of the body (the rest stays for later).
  Posted take_posted(size_t max_body);
  // The client went or the request timed out: the guest's body streams
  // fail from now on and its waits end.
  void cancel();

  // ---- the worker's side ----------------------------------------------------
  int request_ready_fd() const { return request_ready_fd_; }
  int response_room_fd() const { return response_room_fd_; }
  enum class Read { bytes, pending, ended, failed };
  // Up to `max` request bytes appended to `out`: `bytes` (some came),
  // `pending` (none yet), `ended` (no more: trailers are ready), `failed`.
  Read read_request(size_t max, std::string& out);
  std::vector<wire::Field> request_trailers() const;
  std::optional<RequestBodyFailure> request_failure() const;
  bool cancelled() const;
  // False when a head was set already.
  bool set_response_head(ResponseHead head);
  size_t response_room() const;
  // False when the request was cancelled (the bytes go nowhere).
  bool write_response(std::string_view bytes);
  void end_response(std::vector<wire::Field> trailers);
  void fail_response(std::string why);
  void worker_done();

 private:
  // Sets the level-triggered fds and wakes the loop; with mutex_ held.
  void update_levels();
  void wake_loop();

  mutable std::mutex mutex_;
  int loop_fd_ = -1, request_ready_fd_ = -1, response_room_fd_ = -1;
  bool request_ready_set_ = false, response_room_set_ = false;
  // loop -> worker
  std::string request_;
  bool request_ended_ = false;
  std::vector<wire::Field> request_trailers_;
  std::optional<RequestBodyFailure> request_failure_;
  bool cancelled_ = false;
  // worker -> loop
  std::optional<ResponseHead> head_;
  bool head_set_ = false;
  std::string response_;
  bool response_ended_ = false;
  std::vector<wire::Field> response_trailers_;
  std::optional<std::string> failure_;
  bool done_ = false;
};

}  // namespace cmhost::http::p2
