// The two directions of an HTTP body between the wire and a guest, shared
// by the server (requests in, responses out) and the client (requests
// out, responses in). Both move bytes as the guest's copies allow: the
// wire side buffers a bounded amount and is told when to read or write
// more, so a slow guest slows the connection rather than filling memory.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cmhost/cmhost.hpp"
#include "cmhost/streams.hpp"
#include "http/p3/types.hpp"
#include "http/wire.hpp"

namespace cmhost::http::p3 {

class OutgoingBody;

// Trailers an incoming body hands on: its fields, or why it did not end.
struct ForwardedTrailers {
  std::vector<wire::Field> fields;
  std::optional<ErrorCode> failure;
};

// A body arriving from the wire for a guest: bytes as the parser gives
// them, then the end with its trailers (or a failure). The guest's ends
// are made when it consumes the body (Body::produce); a body a guest
// passes on unconsumed goes host to host with no ends at all.
class IncomingBody : public std::enable_shared_from_this<IncomingBody> {
 public:
  IncomingBody(Store& store, std::shared_ptr<const TypesContext> types) : store_(store), types_(std::move(types)) {}

  // The body a request or response object carries until consume-body.
  Body body();
  // Bytes of the body, in order.
  void add(std::string_view bytes);
  // The body ended, with these trailers.
  void finish(std::vector<wire::Field> trailers);
  // The body cannot end (the peer went, a timeout): the guest's trailers
  // future says why.
  void fail(ErrorCode why);

  // Bytes held for the guest: the wire side stops reading past a bound.
  size_t buffered() const { return pending_.size(); }
  bool ended() const { return finished_ || failed_; }
  // Runs when buffered bytes went to the guest (or were discarded).
  std::function<void()> on_taken;
  // How the guest's processing of the body went (consume-body's `res`),
  // once it says; none when it dropped the future.
  std::function<void(std::optional<TransmitResult>)> on_outcome;

  // The live incoming body of `store` whose stream or trailers' future
  // `body` (a body going out) holds the other end of: a guest handed it
  // on (a request's body as the response's, a response's to a request).
  static std::shared_ptr<IncomingBody> source_of(const Store& store, const StreamReader<uint8_t>* contents,
                                                 const FutureReader<TrailersResult>* trailers);
  bool feeds(const StreamReader<uint8_t>& contents) const;
  bool resolves(const FutureReader<TrailersResult>& trailers) const;
  // From now on the bytes (`contents`) and the trailers (`trailers`) go to
  // `out` directly, host to host, from the loop: no guest holds an end of
  // those channels, and the host's are closed.
  void forward_to(const std::shared_ptr<OutgoingBody>& out, bool contents, bool trailers);

 private:
  friend class OutgoingBody;  // asks for more once its sink drained
  void pump();
  void schedule_forward();
  void forward();
  void end_stream();

  Store& store_;
  std::shared_ptr<const TypesContext> types_;
  std::string pending_;
  std::vector<wire::Field> trailers_;
  std::optional<ErrorCode> failure_;
  bool finished_ = false, failed_ = false;
  bool discarding_ = false;  // the guest dropped the stream: bytes go nowhere
  bool trailers_sent_ = false;
  std::optional<StreamWriter<uint8_t>> contents_;
  std::optional<FutureWriter<TrailersResult>> trailers_writer_;
  std::optional<FutureReader<TransmitResult>> outcome_;
  std::weak_ptr<OutgoingBody> forward_;  // set once forwarding
  bool forwarding_contents_ = false, forwarding_trailers_ = false;
  bool forward_scheduled_ = false, forward_ended_ = false;
};

// A body a guest gives (request.new, response.new) going to the wire,
// framed: as chunks with trailers, as declared by a Content-Length
// (checked both ways), or as the bytes until the connection closes.
class OutgoingBody : public std::enable_shared_from_this<OutgoingBody> {
 public:
  struct Sink {
    // Bytes framed and waiting to be sent: no more is read past a bound.
    std::function<size_t()> backlog;
    std::function<void(std::string_view framed)> write;
    // The body is out (ok), or cannot be (err: why, for the transmit future).
    std::function<void(TransmitResult outcome)> done;
  };
  // `request`: the body of a request (its size errors say so), else of a response.
  OutgoingBody(Store& store, std::shared_ptr<const TypesContext> types, Body body, bool request, wire::Framing framing,
               std::optional<uint64_t> content_length, Sink sink);

  // Reads on while the backlog allows; call again once the sink drained.
  void resume();
  bool finished() const { return finished_; }

  // What an incoming body forwards here (IncomingBody::forward_to): bytes
  // up to room(), then the end of the contents, or a failure.
  size_t room() const;
  void take_forwarded(std::string_view bytes);
  void forwarded_end(std::optional<ErrorCode> failure);
  // The trailers it forwards once it ended (or why it could not).
  void forwarded_trailers(ForwardedTrailers trailers);

 private:
  void start_forwarding();
  void append(std::string_view bytes);
  void read_trailers();
  void send_trailers(const std::vector<wire::Field>& fields);
  void end(TransmitResult outcome);
  ErrorCode size_error() const;

  Store& store_;
  std::shared_ptr<const TypesContext> types_;
  std::optional<StreamReader<uint8_t>> contents_;
  std::optional<FutureReader<TrailersResult>> trailers_;
  bool request_;
  wire::Framing framing_;
  std::optional<uint64_t> content_length_;
  Sink sink_;
  uint64_t bytes_ = 0;
  bool over_length_ = false;
  bool finished_ = false;
  bool forwarding_checked_ = false;
  // While they forward here: where the contents come from (or the whole
  // body, passed on unconsumed), and the trailers when another body's.
  std::shared_ptr<IncomingBody> forwarded_from_, trailers_from_;
  bool contents_forwarded_ = false, trailers_forwarded_ = false;
  std::optional<ForwardedTrailers> forwarded_trailers_;
};

// The fields of a guest's trailers future's value, the handle dropped.
std::vector<wire::Field> take_trailer_fields(Store& store, const TypesContext& types, const TrailersResult& value);

}  // namespace cmhost::http::p3
