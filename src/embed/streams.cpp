// The host's ends of streams and futures (cmhost/streams.hpp) on the host
// room's HostEnd.
#include "cmhost/streams.hpp"

#include <fmt/core.h>

#include "embed/impl.hpp"
#include "host/stream_ends.hpp"
#include "host/type_name.hpp"

namespace cmhost {

class ChannelEnd::Impl {
 public:
  Impl(Store::Impl& store, std::unique_ptr<host::HostEnd> end) : store(&store), end(std::move(end)) {}
  Store::Impl* store;  // its compiled element programs
  std::unique_ptr<host::HostEnd> end;
  Val readable;  // a new stream's or future's readable end, for a guest
  // The store's compiled programs, looked up on first use.
  mutable const abi::ValueAbi* abi32 = nullptr;
  mutable const abi::ValueAbi* abi64 = nullptr;
  mutable const abi::ValueAbi* list32 = nullptr;
  mutable const abi::ValueAbi* list64 = nullptr;
  // What a typed end's handle tags stand for in its element type (null:
  // no handles); points into the element type, which the end keeps.
  std::unique_ptr<abi::typed::HandleTypes> handles;

  void check_alive() const {
    if (!end->alive()) throw Error(ErrorKind::Usage, "the stream's store is gone");
  }
  const abi::ValueAbi& compiled(abi::AddrWidth width, bool list) const {
    check_alive();
    const abi::TypeRef& elem = end->element();
    auto [it, made] = store->element_abis.try_emplace({elem.get(), width, list});
    if (made) {
      it->second.type = elem;
      it->second.abi = std::make_unique<abi::ValueAbi>(list ? abi::Type::list(elem) : elem, width);
    }
    return *it->second.abi;
  }
};

ChannelEnd::ChannelEnd(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ChannelEnd::ChannelEnd(ChannelEnd&&) noexcept = default;
ChannelEnd& ChannelEnd::operator=(ChannelEnd&&) noexcept = default;
ChannelEnd::~ChannelEnd() = default;

namespace {

void check_element_type(Store::Impl& store, const abi::TypeRef& elem, bool stream,
                        bool (*matches)(const abi::Type&), const std::type_info& cpp) {
  const char* what = stream ? "stream" : "future";
  if (!elem)
    throw_invalid_value(std::string("the ") + what + " has no element type: no " + host::type_name(cpp) +
                        " can be read from it");
  for (const Store::Impl::MatchedElement& m : store.matched_elements)
    if (m.type == elem && m.matches == matches) return;
  if (!matches(*elem))
    throw_invalid_value(fmt::format("the {}'s elements are {}, which a {} cannot hold", what, elem->to_wit(),
                                    host::type_name(cpp)));
  store.matched_elements[store.next_matched_element] = {elem, matches};
  store.next_matched_element = (store.next_matched_element + 1) % store.matched_elements.size();
}

}  // namespace

ChannelEnd ChannelEnd::take_readable(Store& store, const Val& end, bool stream, ElementCheck check) {
  const abi::ValKind want = stream ? abi::ValKind::Stream : abi::ValKind::Future;
  if (end.kind() != want)
    throw_invalid_value(fmt::format("a {} reader takes a {} value, not a {}", stream ? "stream" : "future",
                                    stream ? "stream" : "future", abi::to_string(end.kind())));
  Store::Impl& s = *store.impl_;
  auto accepts = [&](const abi::TypeRef& elem) { check_element_type(s, elem, stream, check.matches, check.cpp); };
  return ChannelEnd(
      std::make_unique<Impl>(s, host::HostEnd::take_readable(s.runtime, s.loop, end.as_handle(), stream, accepts)));
}

ChannelEnd ChannelEnd::make_writable(Store& store, abi::TypeRef element, bool stream, ElementCheck check) {
  Store::Impl& s = *store.impl_;
  if (const char* why = stream ? abi::invalid_stream_element(element.get()) : nullptr) throw_invalid_value(why);
  check_element_type(s, element, stream, check.matches, check.cpp);
  uint32_t handle = 0;
  auto impl = std::make_unique<Impl>(s, host::HostEnd::make_writable(s.runtime, s.loop, std::move(element), stream, handle));
  impl->readable = stream ? Val::stream(handle) : Val::future(handle);
  return ChannelEnd(std::move(impl));
}

const Val& ChannelEnd::readable_end() const { return impl_->readable; }

Val ChannelEnd::release_readable(Store& store) {
  check_store(store);
  const bool stream = impl_->end->is_stream();
  const uint32_t handle = impl_->end->release_readable();
  return stream ? Val::stream(handle) : Val::future(handle);
}

void ChannelEnd::bind_element_handles(bool (*bind)(const abi::Type& element, abi::typed::HandleTypes& found)) {
  auto handles = std::make_unique<abi::typed::HandleTypes>();
  // The element type was checked against the C++ type already.
  if (!bind(*impl_->end->element(), *handles))
    throw_invalid_value("the element type's handles do not fit the C++ type's handle tags");
  impl_->handles = std::move(handles);
}

const abi::typed::HandleTypes* ChannelEnd::element_handles(const Impl* impl) { return impl->handles.get(); }

void ChannelEnd::check_element(bool (*matches)(const abi::Type&), const std::type_info& cpp) const {
  impl_->check_alive();  // the store's memo of matched types goes with it
  check_element_type(*impl_->store, impl_->end->element(), impl_->end->is_stream(), matches, cpp);
}

const abi::ValueAbi& ChannelEnd::value_abi(const Impl* impl, abi::AddrWidth width) {
  const abi::ValueAbi*& slot = width == abi::AddrWidth::I64 ? impl->abi64 : impl->abi32;
  if (!slot) slot = &impl->compiled(width, false);
  return *slot;
}

const abi::ValueAbi& ChannelEnd::list_abi(const Impl* impl, abi::AddrWidth width) {
  const abi::ValueAbi*& slot = width == abi::AddrWidth::I64 ? impl->list64 : impl->list32;
  if (!slot) slot = &impl->compiled(width, true);
  return *slot;
}

const abi::TypeRef& ChannelEnd::element_type() const { return impl_->end->element(); }
bool ChannelEnd::ended() const { return impl_->end->ended(); }
bool ChannelEnd::busy() const { return impl_->end->busy(); }
uint64_t ChannelEnd::transferred() const { return impl_->end->transferred(); }
bool ChannelEnd::same_channel(const ChannelEnd& other) const { return impl_->end->same_channel(*other.impl_->end); }

void ChannelEnd::check_store(const Store& store) const {
  if (!impl_->end->alive()) throw Error(ErrorKind::Usage, "the stream or future end's store is gone");
  if (store.impl_.get() != impl_->store)
    throw Error(ErrorKind::Usage, "the stream or future end belongs to another store");
}

CopyOutcome ChannelEnd::copy_in_place(Store& store, uint64_t max, InPlaceStep step) {
  check_store(store);
  return impl_->end->run(max, step);
}

namespace {
// A started copy's `done`, owning its step: both live exactly as long as
// the copy (and go with the store if it goes first), so a later copy on the
// end never sees an earlier one's step go.
std::function<void(CopyOutcome)> owning(std::shared_ptr<OwnedInPlaceStep> step,
                                        std::function<void(CopyOutcome)> done) {
  return [step = std::move(step), done = std::move(done)](CopyOutcome outcome) {
    if (done) done(outcome);
  };
}
}  // namespace

void ChannelEnd::start_in_place(Store& store, uint64_t max, OwnedInPlaceStep step, std::function<void(CopyOutcome)> done) {
  check_store(store);
  Impl* impl = impl_.get();
  impl->end->check_startable();  // before the step of a copy in flight is replaced
  auto owned = std::make_shared<OwnedInPlaceStep>(std::move(step));
  impl->end->start(max, *owned, owning(owned, std::move(done)));
}

void ChannelEnd::start_when_ready(Store& store, int fd, short events, uint64_t max, ReadyStep step,
                                  std::function<void(CopyOutcome)> done) {
  if (fd < 0) throw Error(ErrorKind::Usage, "start_when_ready needs a descriptor");
  check_store(store);
  Impl* impl = impl_.get();
  impl->end->check_startable();
  auto owned = std::make_shared<OwnedInPlaceStep>(
      [step = std::move(step)](abi::AbiContext& cx, uint64_t ptr, uint64_t n) -> uint64_t {
        const std::optional<uint64_t> moved = step(cx, ptr, n);
        return moved ? *moved : host::HostEnd::kStepEnded;
      });
  impl->end->start(max, *owned, owning(owned, std::move(done)), host::HostEnd::Gate{fd, events});
}

CopyOutcome ChannelEnd::cancel() { return impl_->end->cancel(); }

void ChannelEnd::close() { impl_->end->close(); }

}  // namespace cmhost
