// Store, its user data and host objects, and what a host function sees of
// its call (Caller).
#include <fmt/core.h>

#include "embed/impl.hpp"
#include "host/type_name.hpp"
#include "host/worker_pool.hpp"
#include "runtime/scheduler.hpp"

namespace cmhost {

Store::Store(const Engine& engine) : impl_(std::make_unique<Impl>(engine.shared_core())) {
  impl_->runtime.set_embedder(this);
  set_limits(StoreLimits{});
}

Store::Store(Store&& other) noexcept
    : data_(std::move(other.data_)), data_type_(other.data_type_), impl_(std::move(other.impl_)) {
  if (impl_) impl_->runtime.set_embedder(this);
}

Store& Store::operator=(Store&& other) noexcept {
  impl_.reset();  // the instances and host objects go before the user data they may use
  data_ = std::move(other.data_);
  data_type_ = other.data_type_;
  impl_ = std::move(other.impl_);
  if (impl_) impl_->runtime.set_embedder(this);
  return *this;
}

Store::~Store() { impl_.reset(); }

size_t Store::host_objects() const { return impl_->objects.size(); }

void Store::set_limits(const StoreLimits& limits) {
  impl_->runtime.core().set_memory_limits({limits.memory_bytes, limits.total_memory_bytes, limits.table_elements});
  impl_->runtime.set_limits({limits.instances, limits.call_depth, limits.lift_bytes}, limits.table_entries,
                            limits.waitables, limits.host_bytes);
  impl_->limits = limits;
}

const StoreLimits& Store::limits() const { return impl_->limits; }

void Store::set_fuel(std::optional<uint64_t> units) { impl_->runtime.core().set_fuel(units); }

std::optional<uint64_t> Store::fuel() const { return impl_->runtime.core().fuel(); }

void Store::set_epoch_deadline(uint64_t ticks) {
  engine::Engine& engine = impl_->runtime.engine();
  const uint64_t now = engine.epoch();
  impl_->runtime.core().set_epoch_deadline(ticks > UINT64_MAX - now ? UINT64_MAX - 1 : now + ticks);
}

bool Store::interrupted() const { return impl_->runtime.core().deadline_passed(); }

void Store::drop(const Val& own) {
  if (own.kind() != abi::ValKind::Own) throw_invalid_value("Store::drop takes an own handle");
  impl_->runtime.drop_resource(own.as_handle());
}

namespace {

// The loop runs on the embedder's stack, not inside a guest's call.
void check_outside_guests(runtime::Scheduler& scheduler, const char* what) {
  if (scheduler.current())
    throw Error(ErrorKind::Usage, std::string(what) + " cannot run inside a guest's call (a host function is on the "
                                                      "guest's stack): start work there, the embedder's loop ends it");
}

}  // namespace

void Store::run_until(FunctionRef<bool()> done) {
  check_outside_guests(impl_->runtime.scheduler(), "Store::run_until");
  impl_->runtime.scheduler().run_until(done, "the embedder's condition");
}

Store::WaitId Store::when_ready(int fd, short events, std::function<void(short revents)> ready) {
  return impl_->loop.reactor().when_ready(fd, events, std::move(ready));
}

Store::WaitId Store::when_time(std::chrono::steady_clock::time_point deadline, std::function<void()> due) {
  const auto since_epoch = std::chrono::duration_cast<std::chrono::nanoseconds>(deadline.time_since_epoch()).count();
  return impl_->loop.reactor().when_time(since_epoch < 0 ? 0 : static_cast<uint64_t>(since_epoch), std::move(due));
}

Store::WaitId Store::when_idle(std::function<void()> idle) { return impl_->loop.reactor().when_idle(std::move(idle)); }

bool Store::cancel_wait(WaitId id) { return impl_->loop.reactor().cancel(id); }

void Store::run_blocking(std::function<void()> work, std::function<void(std::exception_ptr)> done) {
  if (!work || !done) throw Error(ErrorKind::Usage, "Store::run_blocking needs the work and what runs after it");
  host::HostLoop* loop = &impl_->loop;
  std::shared_ptr<runtime::PostBox> box = loop->post_box();
  // The continuation stays with the loop (destroyed on its thread, with it);
  // the pool's thread sees only the ticket and posts it back, to run on the
  // loop's thread (never before this call returns).
  const uint64_t ticket = loop->new_ticket();
  host::WorkerPool::shared().run([box, loop, ticket, work = std::move(work)]() mutable {
    std::exception_ptr failure;
    try {
      work();
    } catch (...) {
      failure = std::current_exception();
    }
    // Runs only while the loop exists: a closed box drops it.
    box->post([loop, ticket, failure] { loop->run_continuation(ticket, failure); }, /*ends_call=*/true);
  });
  loop->keep_continuation(ticket, std::move(done));
  loop->call_started();  // outstanding until the continuation is posted
}

void Store::run_until_idle() {
  check_outside_guests(impl_->runtime.scheduler(), "Store::run_until_idle");
  impl_->runtime.scheduler().run_until_idle();
}

void Store::drive(Store& other, std::function<void(const Error& trap)> on_trap) {
  impl_->loop.drive(other.impl_->loop, other.impl_->runtime.scheduler(), std::move(on_trap));
}

void Store::stop_driving(Store& other) { impl_->loop.stop_driving(other.impl_->loop); }

void Store::check_data_type(const std::type_info& asked) const {
  if (data_type_ && *data_type_ == asked) return;
  throw Error(ErrorKind::Usage, data_type_ ? fmt::format("the store's data is a {}, not a {}", host::type_name(*data_type_),
                                                         host::type_name(asked))
                                           : fmt::format("the store has no data (asked for a {})", host::type_name(asked)));
}

Store& Caller::store() {
  auto* store = static_cast<Store*>(context_.call.store.embedder());
  if (!store) throw Error(ErrorKind::Usage, "the runtime store has no cmhost::Store");
  return *store;
}

bool Caller::from_guest() const { return context_.call.caller != nullptr; }

std::span<uint8_t> Caller::memory() {
  abi::AbiContext* cx = context_.call.caller_cx;
  if (!cx || !cx->has_memory()) return {};
  cx->refresh();
  return {cx->base(), static_cast<size_t>(cx->size())};
}

uint64_t Caller::realloc(uint64_t old_ptr, uint64_t old_size, uint32_t align, uint64_t new_size) {
  abi::AbiContext* cx = context_.call.caller_cx;
  if (!cx || !cx->has_memory()) throw Error(ErrorKind::Usage, "the call has no guest memory to allocate in");
  return cx->realloc(old_ptr, old_size, align, new_size);
}

HostResourceBase::HostResourceBase(std::shared_ptr<const Impl> impl)
    : impl_(std::move(impl)), abi_type_(impl_->type->abi_type) {}

Val HostResourceBase::make_object(Store& store, std::shared_ptr<void> object, const std::type_info& type) const {
  if (!object) throw_invalid_value("a host resource needs an object, not null");
  const uint32_t rep = store.impl_->objects.add(std::move(object), type);
  try {
    return Val::own(store.impl_->runtime.new_resource(impl_->type, rep));
  } catch (...) {
    store.impl_->objects.remove(rep);
    throw;
  }
}

void* HostResourceBase::object(Store& store, const Val& handle, const std::type_info& type) const {
  if (handle.kind() != abi::ValKind::Own && handle.kind() != abi::ValKind::Borrow)
    throw_invalid_value("a host resource handle is an own or borrow value");
  const uint32_t rep = store.impl_->runtime.resource_rep(handle.as_handle(), impl_->type);
  return store.impl_->objects.get(rep, type);
}

}  // namespace cmhost
