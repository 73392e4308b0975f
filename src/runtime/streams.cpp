#include "streams.hpp"

#include <algorithm>
#include <cstring>

#include "call_context.hpp"
#include "cmhost/error.hpp"

namespace cmhost::runtime {

namespace {

constexpr uint64_t kMaxBufferLength = (uint64_t{1} << 28) - 1;

// Within one instance only numbers may be copied (the reference's temporary
// none_or_number_type rule).
bool none_or_number(const abi::TypeRef& t) {
  if (!t) return true;
  switch (t->kind()) {
    case abi::TypeKind::U8: case abi::TypeKind::S8: case abi::TypeKind::U16: case abi::TypeKind::S16:
    case abi::TypeKind::U32: case abi::TypeKind::S32: case abi::TypeKind::U64: case abi::TypeKind::S64:
    case abi::TypeKind::F32: case abi::TypeKind::F64: return true;
    default: return false;
  }
}

void check_not_intra_component(ComponentInstance& inst, const PendingCopy& pending, const abi::TypeRef& elem,
                               const char* what) {
  if (&inst == pending.inst && !none_or_number(elem))
    throw_trap(std::string("cannot read from and write to intra-component ") + what + " of non-number values");
}

}  // namespace

bool same_element_type(const abi::TypeRef& a, const abi::TypeRef& b) {
  if (!a || !b) return !a && !b;
  return abi::equal(*a, *b, [](const abi::ResourceType&, const abi::ResourceType&) { return true; });
}

// ---- buffers ----

GuestBuffer::GuestBuffer(Store& store, ComponentInstance& inst, bool* may_leave, abi::TypeRef elem,
                         const CopyOptions& options, uint64_t ptr, uint64_t length)
    : store_(store),
      inst_(inst),
      may_leave_(may_leave),
      elem_(std::move(elem)),
      options_(options),
      ptr_(ptr),
      length_(length) {
  if (length > kMaxBufferLength) throw_trap("stream or future buffer longer than 2^28-1 elements");
  if (elem_ && length > 0) {
    const abi::Layout& layout = elem_->layout(options.abi.addr);
    if (ptr % layout.align != 0) throw_trap("misaligned stream or future buffer pointer");
    const uint64_t size = store.core().memory_bytes(*options.memory).size();
    if (ptr > size || length * layout.size > size - ptr) throw_trap("stream or future buffer out of bounds");
  }
}

void GuestBuffer::copy(GuestBuffer& src, GuestBuffer& dst, uint64_t n) {
  if (src.elem_ && n > 0) {
    Store& store = dst.store_;
    const abi::Layout& src_layout = src.elem_->layout(src.options_.abi.addr);
    const abi::Layout& dst_layout = dst.elem_->layout(dst.options_.abi.addr);
    if (&src.inst_ == &dst.inst_) {
      // Numbers only (checked by the caller): the same bytes on both sides.
      const std::span<uint8_t> from = store.core().memory_bytes(*src.options_.memory);
      const std::span<uint8_t> to = store.core().memory_bytes(*dst.options_.memory);
      std::memmove(to.data() + dst.ptr_, from.data() + src.ptr_, n * src_layout.size);
    } else {
      GuestContext src_side(store, src.inst_, src.options_.memory, src.options_.realloc, src.options_.abi, uint64_t{0});
      GuestContext dst_side(store, dst.inst_, dst.options_.memory, dst.options_.realloc, dst.options_.abi, uint64_t{0});
      abi::AbiContext& from = src_side.cx();
      abi::AbiContext& to = dst_side.cx();
      const abi::ValueCopy program(src.elem_, src.options_.abi.addr, dst.elem_, dst.options_.abi.addr);
      for (uint64_t i = 0; i < n; ++i) {
        from.refresh();
        program.copy(from, src.ptr_ + i * src_layout.size, to, dst.ptr_ + i * dst_layout.size);
      }
    }
    src.ptr_ += n * src_layout.size;
    dst.ptr_ += n * dst_layout.size;
  }
  src.progress_ += n;
  dst.progress_ += n;
}

void GuestBuffer::advance(uint64_t n) {
  if (elem_) ptr_ += n * elem_->layout(options_.abi.addr).size;
  progress_ += n;
}

// ---- ends ----

HandleKind CopyEnd::handle_kind() const {
  switch (kind_) {
    case Kind::StreamReadable: return HandleKind::StreamReadable;
    case Kind::StreamWritable: return HandleKind::StreamWritable;
    case Kind::FutureReadable: return HandleKind::FutureReadable;
    case Kind::FutureWritable: return HandleKind::FutureWritable;
  }
  return HandleKind::StreamReadable;
}

SharedStream& CopyEnd::stream() const { return static_cast<SharedStream&>(*shared_); }
SharedFuture& CopyEnd::future() const { return static_cast<SharedFuture&>(*shared_); }
SharedChannel& CopyEnd::channel() const { return static_cast<SharedChannel&>(*shared_); }
const abi::TypeRef& CopyEnd::element_type() const { return channel().elem; }

void CopyEnd::start_copy(uint32_t index, std::unique_ptr<GuestBuffer> buffer) {
  index_ = index;
  buffer_ = std::move(buffer);
  state = State::Copying;
}

void CopyEnd::on_copy() {
  result_ = CopyStatus::Completed;
  reclaim_ = true;
  set_pending_event();
}

void CopyEnd::on_copy_done(CopyStatus result) {
  result_ = result;
  reclaim_ = false;
  set_pending_event();
}

Event CopyEnd::deliver() {
  // A buffer parked in the shared state is given back with the event.
  if (reclaim_ && is_stream()) stream().reset_pending();
  const CopyStatus result = result_;
  uint32_t payload = static_cast<uint32_t>(result);
  if (is_stream()) {
    state = result == CopyStatus::Dropped ? State::Done : State::Idle;
    payload |= static_cast<uint32_t>(buffer_->progress()) << 4;
  } else {
    state = result == CopyStatus::Cancelled ? State::Idle : State::Done;
  }
  buffer_.reset();
  reclaim_ = false;
  EventCode code = EventCode::StreamRead;
  switch (kind_) {
    case Kind::StreamReadable: code = EventCode::StreamRead; break;
    case Kind::StreamWritable: code = EventCode::StreamWrite; break;
    case Kind::FutureReadable: code = EventCode::FutureRead; break;
    case Kind::FutureWritable: code = EventCode::FutureWrite; break;
  }
  return {code, index_, payload};
}

void CopyEnd::drop() {
  if (copying()) throw_trap(std::string("cannot drop busy ") + (is_stream() ? "stream" : "future"));
  if (kind_ == Kind::FutureWritable && state != State::Done)
    throw_trap("cannot drop future write end without first writing a value");
  channel().drop();
  drop_waitable();
}

void CopyEnd::detach() {
  SharedChannel& ch = channel();
  if (ch.pending.end == this) ch.reset_pending();
  ch.dropped = true;
  Waitable::detach();
}

// ---- the state a stream's or future's two ends share ----

void SharedChannel::reset_and_notify_pending(CopyStatus result) {
  CopyEnd* end = pending.end;
  reset_pending();
  end->on_copy_done(result);
}

void SharedChannel::drop() {
  if (dropped) return;
  dropped = true;
  if (pending) reset_and_notify_pending(CopyStatus::Dropped);
  if (host_side) host_side->guest_dropped();
}

void SharedChannel::park(ComponentInstance& inst, GuestBuffer& buffer, CopyEnd& end) {
  pending = {&inst, &buffer, &end};
  if (host_side) host_side->guest_copy_parked();
}

bool SharedChannel::finish_or_park(ComponentInstance& inst, GuestBuffer& buffer, CopyEnd& end, const char* what) {
  if (dropped) {
    end.on_copy_done(CopyStatus::Dropped);
    return true;
  }
  if (!pending) {
    park(inst, buffer, end);
    return true;
  }
  check_not_intra_component(inst, pending, elem, what);
  return false;
}

// ---- streams ----

void SharedStream::read(ComponentInstance& inst, GuestBuffer& dst, CopyEnd& end) {
  if (finish_or_park(inst, dst, end, "stream")) return;
  if (pending.buffer->remain() > 0) {
    if (dst.remain() > 0) {
      GuestBuffer::copy(*pending.buffer, dst, std::min(dst.remain(), pending.buffer->remain()));
      pending.end->on_copy();
    }
    end.on_copy_done(CopyStatus::Completed);
  } else {
    reset_and_notify_pending(CopyStatus::Completed);
    park(inst, dst, end);
  }
}

void SharedStream::write(ComponentInstance& inst, GuestBuffer& src, CopyEnd& end) {
  if (finish_or_park(inst, src, end, "stream")) return;
  if (pending.buffer->remain() > 0) {
    if (src.remain() > 0) {
      GuestBuffer::copy(src, *pending.buffer, std::min(src.remain(), pending.buffer->remain()));
      pending.end->on_copy();
    }
    end.on_copy_done(CopyStatus::Completed);
  } else if (src.zero_length() && pending.buffer->zero_length()) {
    end.on_copy_done(CopyStatus::Completed);
  } else {
    reset_and_notify_pending(CopyStatus::Completed);
    park(inst, src, end);
  }
}

// ---- futures ----

void SharedFuture::read(ComponentInstance& inst, GuestBuffer& dst, CopyEnd& end) {
  if (finish_or_park(inst, dst, end, "future")) return;
  GuestBuffer::copy(*pending.buffer, dst, 1);
  reset_and_notify_pending(CopyStatus::Completed);
  end.on_copy_done(CopyStatus::Completed);
}

void SharedFuture::write(ComponentInstance& inst, GuestBuffer& src, CopyEnd& end) {
  if (finish_or_park(inst, src, end, "future")) return;
  GuestBuffer::copy(src, *pending.buffer, 1);
  reset_and_notify_pending(CopyStatus::Completed);
  end.on_copy_done(CopyStatus::Completed);
}

// ---- moving readable ends across calls ----

std::pair<HandleKind, std::shared_ptr<HandleObject>> Streams::lift_end(ComponentInstance& inst, const abi::Type& type,
                                                                       uint32_t index) {
  const bool stream = type.kind() == abi::TypeKind::Stream;
  const char* what = stream ? "stream" : "future";
  const HandleKind kind = stream ? HandleKind::StreamReadable : HandleKind::FutureReadable;
  HandleTable::Entry entry = inst.state().handles->remove_entry(index);
  if (entry.kind != kind)
    throw_trap("handle index " + std::to_string(index) + " is a " + to_string(entry.kind) + ", not a readable " +
               what + " end");
  auto& end = static_cast<CopyEnd&>(*entry.object);
  if (!same_element_type(end.element_type(), type.element()))
    throw_trap(std::string("the ") + what + "'s element type is not " + type.to_wit() + "'s");
  if (end.state == CopyEnd::State::Done)
    throw_trap(std::string("cannot lift ") + what + " after being notified that the " +
               (stream ? "writable end dropped" : "previous read succeeded"));
  if (end.state != CopyEnd::State::Idle) throw_trap(std::string("cannot lift busy ") + what);
  if (end.in_waitable_set()) throw_trap(std::string("cannot lift ") + what + " while it's in a waitable set");
  return {stream ? HandleKind::SharedStream : HandleKind::SharedFuture, end.shared()};
}

uint32_t Streams::lower_end(ComponentInstance& inst, const abi::Type& type, std::shared_ptr<HandleObject> shared) {
  const bool stream = type.kind() == abi::TypeKind::Stream;
  auto end = std::make_shared<CopyEnd>(stream ? CopyEnd::Kind::StreamReadable : CopyEnd::Kind::FutureReadable,
                                       std::move(shared));
  const HandleKind kind = end->handle_kind();
  return inst.state().handles->add(kind, std::move(end));
}

}  // namespace cmhost::runtime
