#include "bodies.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <mutex>
#include <utility>

namespace cmhost::http::p3 {

namespace {

// How much a guest's read or the wire's backlog takes at a time.
constexpr uint64_t kCopyBytes = 64 * 1024;
constexpr size_t kBacklogBytes = 256 * 1024;

// The incoming bodies whose ends guests hold, by store: a body going out
// looks here for the one a guest handed on to it.
struct Produced {
  const Store* store;
  std::weak_ptr<IncomingBody> body;
};
std::mutex produced_mutex;
std::vector<Produced> produced;

void note_produced(const Store& store, const std::shared_ptr<IncomingBody>& body) {
  const std::lock_guard lock(produced_mutex);
  std::erase_if(produced, [](const Produced& p) { return p.body.expired(); });
  produced.push_back({&store, body});
}

// Runs `run` from the store's loop, never inside the caller's own step.
void from_loop(Store& store, std::function<void()> run) {
  store.when_time(std::chrono::steady_clock::now(), std::move(run));
}

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
    note_produced(store, self);
    // The bytes move from the loop, not inside the guest's call.
    from_loop(store, [self] { self->pump(); });
    return ends;
  };
  body.unconsumed = shared_from_this();
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

std::shared_ptr<IncomingBody> IncomingBody::source_of(const Store& store, const StreamReader<uint8_t>* contents,
                                                     const FutureReader<TrailersResult>* trailers) {
  const std::lock_guard lock(produced_mutex);
  for (const Produced& p : produced) {
    if (p.store != &store) continue;
    if (auto body = p.body.lock(); body && ((contents && body->feeds(*contents)) || (trailers && body->resolves(*trailers))))
      return body;
  }
  return nullptr;
}

bool IncomingBody::feeds(const StreamReader<uint8_t>& contents) const {
  return contents_ && contents_->same_channel(contents);
}

bool IncomingBody::resolves(const FutureReader<TrailersResult>& trailers) const {
  return trailers_writer_ && trailers_writer_->same_channel(trailers);
}

void IncomingBody::forward_to(const std::shared_ptr<OutgoingBody>& out, bool contents, bool trailers) {
  forward_ = out;
  // A copy started for a guest that will never come is called off (no
  // ends at all when no guest consumed the body).
  if (contents) {
    forwarding_contents_ = true;
    if (contents_ && contents_->busy()) contents_->cancel();
    if (contents_ && !contents_->ended()) contents_->close();
  }
  if (trailers) {
    forwarding_trailers_ = true;
    if (trailers_writer_ && trailers_writer_->busy()) trailers_writer_->cancel();
    if (trailers_writer_ && !trailers_writer_->ended()) trailers_writer_->close();
    // A body that had already ended offered its trailers to the future just
    // closed: they go out again, this time forwarded.
    trailers_sent_ = false;
  }
  pump();
}

void IncomingBody::schedule_forward() {
  if (forward_scheduled_) return;
  forward_scheduled_ = true;
  from_loop(store_, [self = shared_from_this()] {
    self->forward_scheduled_ = false;
    self->forward();
  });
}

// The bytes the body going out has room for, then the end.
void IncomingBody::forward() {
  const std::shared_ptr<OutgoingBody> out = forward_.lock();
  if (!out || out->finished()) {  // it is gone: what comes goes nowhere
    discarding_ = true;
    pending_.clear();
    if (on_taken) on_taken();
    if (ended()) end_stream();  // trailers the guest kept still resolve
    return;
  }
  if (!pending_.empty()) {
    // A sink that drains as it is written makes room again at once, and
    // asks for nothing more: all that fits goes now.
    size_t moved = 0;
    while (moved < pending_.size()) {
      const size_t n = std::min(pending_.size() - moved, out->room());
      if (n == 0) break;
      out->take_forwarded(std::string_view(pending_).substr(moved, n));
      moved += n;
    }
    if (moved == 0) return;  // its resume() asks again
    pending_.erase(0, moved);
    if (on_taken) on_taken();
  }
  if (pending_.empty() && ended() && !forward_ended_) {
    forward_ended_ = true;
    out->forwarded_end(failed_ ? failure_ : std::nullopt);
    end_stream();
  }
}

void IncomingBody::pump() {
  if (forwarding_contents_) return schedule_forward();
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
  if (contents_ && !contents_->ended()) contents_->close();
  if (forwarding_trailers_) {
    ForwardedTrailers forwarded{trailers_, failed_ ? failure_ : std::nullopt};
    from_loop(store_, [out = forward_, forwarded = std::move(forwarded)]() mutable {
      if (const auto body = out.lock()) body->forwarded_trailers(std::move(forwarded));
    });
    return;
  }
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
      sink_(std::move(sink)),
      forwarded_from_(body.contents || body.trailers ? nullptr : std::move(body.unconsumed)) {}

void OutgoingBody::resume() {
  if (finished_) return;
  if (!forwarding_checked_) {
    forwarding_checked_ = true;
    start_forwarding();
  }
  if (contents_forwarded_) return forwarded_from_->pump();
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

// A guest handed on an incoming body's stream or trailers' future: those
// come from it directly, as it gets them.
void OutgoingBody::start_forwarding() {
  const auto self = shared_from_this();
  // A message passed on whole: its body was never consumed.
  if (forwarded_from_) {
    contents_forwarded_ = trailers_forwarded_ = true;
    return forwarded_from_->forward_to(self, true, true);
  }
  // The stream and the future may each come from another body.
  const auto contents_source = contents_ ? IncomingBody::source_of(store_, &*contents_, nullptr) : nullptr;
  const auto trailers_source = trailers_ ? IncomingBody::source_of(store_, nullptr, &*trailers_) : nullptr;
  // The reading ends close first: the writing ends then close readerless.
  if (contents_source) {
    contents_->close();
    contents_.reset();
    contents_forwarded_ = true;
    forwarded_from_ = contents_source;
  }
  if (trailers_source) {
    trailers_->close();
    trailers_.reset();
    trailers_forwarded_ = true;
    trailers_from_ = trailers_source;
  }
  if (contents_source && contents_source == trailers_source) return contents_source->forward_to(self, true, true);
  if (contents_source) contents_source->forward_to(self, true, false);
  if (trailers_source) trailers_source->forward_to(self, false, true);
}

size_t OutgoingBody::room() const {
  const size_t backlog = sink_.backlog();
  return finished_ || backlog >= kBacklogBytes ? 0 : kBacklogBytes - backlog;
}

void OutgoingBody::take_forwarded(std::string_view bytes) {
  if (finished_) return;
  append(bytes);
  if (over_length_) end(TransmitResult::err(size_error()));
}

void OutgoingBody::forwarded_end(std::optional<ErrorCode> failure) {
  if (finished_) return;
  if (failure) return end(TransmitResult::err(*failure));
  contents_forwarded_ = false;
  read_trailers();
}

void OutgoingBody::forwarded_trailers(ForwardedTrailers trailers) {
  if (finished_) return;
  forwarded_trailers_ = std::move(trailers);
  if (!contents_ && !contents_forwarded_) read_trailers();
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
  if (trailers_forwarded_) {
    if (!forwarded_trailers_) return;  // they come once the incoming body ended
    if (forwarded_trailers_->failure) return end(TransmitResult::err(*forwarded_trailers_->failure));
    send_trailers(forwarded_trailers_->fields);
    return end(TransmitResult::ok());
  }
  if (!trailers_ || trailers_->ended()) return end(TransmitResult::ok());
  if (trailers_->busy()) return;
  auto self = shared_from_this();
  trailers_->start_read(store_, [self](std::optional<TrailersResult> value) {
    if (self->finished_) return;
    if (value && value->is_err()) return self->end(TransmitResult::err(value->error()));
    const std::vector<wire::Field> fields =
        value ? take_trailer_fields(self->store_, *self->types_, *value) : std::vector<wire::Field>{};
    self->send_trailers(fields);
    self->end(TransmitResult::ok());
  });
}

void OutgoingBody::send_trailers(const std::vector<wire::Field>& fields) {
  if (framing_ != wire::Framing::chunked) return;
  std::string last;
  wire::append_last_chunk(last, fields);
  sink_.write(last);
}

void OutgoingBody::end(TransmitResult outcome) {
  if (finished_) return;
  finished_ = true;
  contents_.reset();
  trailers_.reset();
  forwarded_from_.reset();
  trailers_from_.reset();
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
