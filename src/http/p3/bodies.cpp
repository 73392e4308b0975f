#include "bodies.hpp"

#include <algorithm>
#include <cstring>
#include <utility>

namespace cmhost::http::p3 {

namespace {

// How much a guest's read or the wire's backlog takes at a time.
constexpr uint64_t kCopyBytes = 64 * 1024;
constexpr size_t kBacklogBytes = 256 * 1024;

}  // namespace

// The request or response holds the body until the guest consumes it (or
// drops it): its ends are made then, and its copies keep it alive until
// all is delivered.
Body IncomingBody::body() {
  Body body;
  body.produce = [self = shared_from_this()](Store& store, FutureReader<TransmitResult> res)
      -> std::tuple<Stream<uint8_t>, Future<TrailersResult>> {
    self->contents_.emplace(store);
    self->trailers_writer_.emplace(store, trailers_type(*self->types_));
    self->outcome_.emplace(std::move(res));
    std::weak_ptr<IncomingBody> weak = self;
    self->outcome_->start_read(store, [weak](std::optional<TransmitResult> outcome) {
      if (const auto body = weak.lock(); body && body->on_outcome) body->on_outcome(std::move(outcome));
    });
    const auto ends = std::make_tuple(self->contents_->readable_handle(), self->trailers_writer_->readable_handle());
    // The bytes move from the loop, not inside the guest's call.
    store.when_time(std::chrono::steady_clock::now(), [self] { self->pump(); });
    return ends;
  };
  return body;
}

void IncomingBody::add(std::string_view bytes) {
  if (discarding_ || ended()) return;
  pending_.append(bytes);
  pump();
}

void IncomingBody::finish(std::vector<wire::Field> trailers) {
  if (ended()) return;
  finished_ = true;
  trailers_ = std::move(trailers);
  pump();
}

void IncomingBody::fail(ErrorCode why) {
  if (ended()) return;
  failed_ = true;
  failure_ = std::move(why);
  pending_.clear();
  pump();
}

void IncomingBody::pump() {
  if (!contents_ || contents_->busy()) return;
  if (contents_->ended() && !discarding_) {
    discarding_ = true;
    pending_.clear();
    if (on_taken) on_taken();
  }
  if (!pending_.empty() && !discarding_) {
    auto self = shared_from_this();
    contents_->start_in_place(
        store_, pending_.size(),
        [self](abi::AbiContext& cx, uint64_t ptr, uint64_t n) -> uint64_t {
          const uint64_t moved = std::min<uint64_t>(n, self->pending_.size());
          std::memcpy(guest_bytes(cx, ptr, moved), self->pending_.data(), moved);
          self->pending_.erase(0, moved);
          return moved;
        },
        [self](CopyOutcome) {
          if (self->on_taken) self->on_taken();
          self->pump();
        });
    return;
  }
  if (ended()) end_stream();
}

// The whole body is the guest's: the stream ends, then the trailers
// future resolves (their fields a new handle the guest then owns).
void IncomingBody::end_stream() {
  if (trailers_sent_) return;
  trailers_sent_ = true;
  if (!contents_->ended()) contents_->close();
  if (!trailers_writer_ || trailers_writer_->ended()) return;
  if (failed_) {
    trailers_writer_->start_write(store_, TrailersResult::err(*failure_), [self = shared_from_this()](CopyOutcome) {});
    return;
  }
  std::optional<Own<types::Fields>> fields;
  if (!trailers_.empty()) {
    FieldList list(types_->forbidden);
    for (const auto& [name, value] : trailers_) list.add_from_host(name, value);
    fields = make_fields(store_, *types_, std::move(list));
  }
  trailers_writer_->start_write(store_, TrailersResult::ok(fields),
                                [self = shared_from_this(), fields](CopyOutcome outcome) {
                                  if (outcome.status != CopyStatus::Completed && fields) self->store_.drop(*fields);
                                });
}

OutgoingBody::OutgoingBody(Store& store, std::shared_ptr<const TypesContext> types, Body body, bool request,
                           wire::Framing framing, std::optional<uint64_t> content_length, Sink sink)
    : store_(store),
      types_(std::move(types)),
      contents_(std::move(body.contents)),
      trailers_(std::move(body.trailers)),
      request_(request),
      framing_(framing),
      content_length_(content_length),
      sink_(std::move(sink)) {}

void OutgoingBody::resume() {
  if (finished_) return;
  if (!contents_) return read_trailers();
  if (contents_->busy() || sink_.backlog() >= kBacklogBytes) return;
  if (contents_->ended()) {
    contents_.reset();
    return read_trailers();
  }
  auto self = shared_from_this();
  contents_->start_in_place(
      store_, kCopyBytes,
      [self](abi::AbiContext& cx, uint64_t ptr, uint64_t n) -> uint64_t {
        self->append(std::string_view(reinterpret_cast<const char*>(guest_bytes(cx, ptr, n)), n));
        return n;
      },
      [self](CopyOutcome outcome) {
        if (self->finished_) return;
        if (self->over_length_)
          return self->end(TransmitResult::err(self->size_error()));
        if (outcome.status == CopyStatus::Dropped) {
          self->contents_.reset();
          return self->read_trailers();
        }
        self->resume();
      });
}

void OutgoingBody::append(std::string_view bytes) {
  bytes_ += bytes.size();
  if (framing_ == wire::Framing::content_length) {
    if (bytes_ > *content_length_) {
      over_length_ = true;
      return;
    }
    sink_.write(bytes);
  } else if (framing_ == wire::Framing::chunked) {
    std::string chunk;
    wire::append_chunk(chunk, bytes);
    sink_.write(chunk);
  } else {
    sink_.write(bytes);
  }
}

void OutgoingBody::read_trailers() {
  if (framing_ == wire::Framing::content_length && bytes_ != *content_length_)
    return end(TransmitResult::err(size_error()));
  if (!trailers_ || trailers_->ended()) return end(TransmitResult::ok());
  if (trailers_->busy()) return;
  auto self = shared_from_this();
  trailers_->start_read(store_, [self](std::optional<TrailersResult> value) {
    if (self->finished_) return;
    if (value && value->is_err()) return self->end(TransmitResult::err(value->error()));
    const std::vector<wire::Field> fields =
        value ? take_trailer_fields(self->store_, *self->types_, *value) : std::vector<wire::Field>{};
    if (self->framing_ == wire::Framing::chunked) {
      std::string last;
      wire::append_last_chunk(last, fields);
      self->sink_.write(last);
    }
    self->end(TransmitResult::ok());
  });
}

void OutgoingBody::end(TransmitResult outcome) {
  if (finished_) return;
  finished_ = true;
  contents_.reset();
  trailers_.reset();
  sink_.done(std::move(outcome));
}

ErrorCode OutgoingBody::size_error() const {
  if (request_) return types::error_code::HTTPRequestBodySize{bytes_};
  return types::error_code::HTTPResponseBodySize{bytes_};
}

std::vector<wire::Field> take_trailer_fields(Store& store, const TypesContext& types, const TrailersResult& value) {
  if (!value.is_ok() || !value.value()) return {};
  const Own<types::Fields> handle = *value.value();
  const std::vector<wire::Field> fields =
      static_cast<HostFields&>(types.resources->fields.get(store, handle)).list().entries();
  store.drop(handle);
  return fields;
}

}  // namespace cmhost::http::p3
