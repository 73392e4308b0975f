#include "exchange.hpp"

#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "cmhost/error.hpp"

namespace cmhost::http::p2 {

namespace {

int new_eventfd() {
  const int fd = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (fd < 0) throw Error(ErrorKind::Usage, std::string("eventfd: ") + std::strerror(errno));
  return fd;
}

void signal_fd(int fd) {
  const uint64_t one = 1;
  [[maybe_unused]] const ssize_t n = ::write(fd, &one, sizeof one);
}

void clear_fd(int fd) {
  uint64_t value = 0;
  [[maybe_unused]] const ssize_t n = ::read(fd, &value, sizeof value);
}

}  // namespace

ProxyExchange::ProxyExchange() {
  loop_fd_ = new_eventfd();
  try {
    request_ready_fd_ = new_eventfd();
    response_room_fd_ = new_eventfd();
  } catch (...) {
    for (int fd : {loop_fd_, request_ready_fd_})
      if (fd >= 0) ::close(fd);
    throw;
  }
  const std::lock_guard lock(mutex_);
  update_levels();
}

ProxyExchange::~ProxyExchange() {
  for (int fd : {loop_fd_, request_ready_fd_, response_room_fd_}) ::close(fd);
}

void ProxyExchange::update_levels() {
  const bool readable = !request_.empty() || request_ended_ || request_failure_ || cancelled_;
  if (readable != request_ready_set_) {
    readable ? signal_fd(request_ready_fd_) : clear_fd(request_ready_fd_);
    request_ready_set_ = readable;
  }
  const bool room = response_.size() < kBufferBytes || cancelled_;
  if (room != response_room_set_) {
    room ? signal_fd(response_room_fd_) : clear_fd(response_room_fd_);
    response_room_set_ = room;
  }
}

void ProxyExchange::wake_loop() { signal_fd(loop_fd_); }

void ProxyExchange::clear_loop_fd() { clear_fd(loop_fd_); }

void ProxyExchange::add_request_bytes(std::string_view bytes) {
  const std::lock_guard lock(mutex_);
  request_.append(bytes);
  update_levels();
}

void ProxyExchange::end_request(std::vector<wire::Field> trailers) {
  const std::lock_guard lock(mutex_);
  request_ended_ = true;
  request_trailers_ = std::move(trailers);
  update_levels();
}

void ProxyExchange::fail_request(RequestBodyFailure why) {
  const std::lock_guard lock(mutex_);
  if (request_ended_) return;
  request_failure_ = why;
  update_levels();
}

size_t ProxyExchange::request_buffered() const {
  const std::lock_guard lock(mutex_);
  return request_.size();
}

Posted ProxyExchange::take_posted(size_t max_body) {
  const std::lock_guard lock(mutex_);
  Posted posted;
  posted.head = std::move(head_);
  head_.reset();
  const size_t n = std::min(max_body, response_.size());
  posted.body = response_.substr(0, n);
  response_.erase(0, n);
  if (response_.empty() && response_ended_) {
    posted.body_ended = true;
    posted.trailers = std::move(response_trailers_);
    response_ended_ = false;  // given once
  }
  if (response_.empty()) {
    posted.failure = std::move(failure_);
    failure_.reset();
    posted.worker_done = done_;
  }
  update_levels();
  return posted;
}

void ProxyExchange::cancel() {
  const std::lock_guard lock(mutex_);
  cancelled_ = true;
  response_.clear();
  update_levels();
}

ProxyExchange::Read ProxyExchange::read_request(size_t max, std::string& out) {
  const std::lock_guard lock(mutex_);
  if (cancelled_) return Read::failed;
  if (!request_.empty()) {
    const size_t n = std::min(max, request_.size());
    const bool was_full = request_.size() >= kBufferBytes;
    out.append(request_, 0, n);
    request_.erase(0, n);
    update_levels();
    // The loop reads the connection again once there is room.
    if (was_full && request_.size() < kBufferBytes) wake_loop();
    return Read::bytes;
  }
  if (request_failure_) return Read::failed;
  if (request_ended_) return Read::ended;
  return Read::pending;
}

std::vector<wire::Field> ProxyExchange::request_trailers() const {
  const std::lock_guard lock(mutex_);
  return request_trailers_;
}

std::optional<RequestBodyFailure> ProxyExchange::request_failure() const {
  const std::lock_guard lock(mutex_);
  if (cancelled_) return RequestBodyFailure::connection_terminated;
  return request_failure_;
}

bool ProxyExchange::cancelled() const {
  const std::lock_guard lock(mutex_);
  return cancelled_;
}

bool ProxyExchange::set_response_head(ResponseHead head) {
  const std::lock_guard lock(mutex_);
  if (head_set_) return false;
  head_set_ = true;
  head_ = std::move(head);
  wake_loop();
  return true;
}

size_t ProxyExchange::response_room() const {
  const std::lock_guard lock(mutex_);
  return cancelled_ || response_.size() >= kBufferBytes ? 0 : kBufferBytes - response_.size();
}

bool ProxyExchange::write_response(std::string_view bytes) {
  const std::lock_guard lock(mutex_);
  if (cancelled_) return false;
  response_.append(bytes);
  update_levels();
  wake_loop();
  return true;
}

void ProxyExchange::end_response(std::vector<wire::Field> trailers) {
  const std::lock_guard lock(mutex_);
  if (cancelled_) return;
  response_ended_ = true;
  response_trailers_ = std::move(trailers);
  wake_loop();
}

void ProxyExchange::fail_response(std::string why) {
  const std::lock_guard lock(mutex_);
  if (!failure_) failure_ = std::move(why);
  wake_loop();
}

void ProxyExchange::worker_done() {
  const std::lock_guard lock(mutex_);
  done_ = true;
  wake_loop();
}

}  // namespace cmhost::http::p2
