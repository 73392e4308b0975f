#include "call_handles.hpp"

#include <fmt/core.h>

#include "streams.hpp"

namespace cmhost::runtime {

namespace {

void run_destructor(Store& store, const ResourceType& type, uint32_t rep) {
  if (type.host_drop) return type.host_drop(store, rep);
  if (type.dtor) {
    const uint64_t arg = rep;
    store.core().call(*type.dtor, std::span<const uint64_t>(&arg, 1), {});
  }
}

void check_type(const ResourceHandle& h, const ResourceTypeRef& expected) {
  if (h.type != expected)
    throw_trap(fmt::format("handle of resource type `{}` used where `{}` is expected",
                           h.type ? h.type->name : "?", expected->name));
}

}  // namespace

void CallHandles::release_lends() {
  for (uint32_t index : lent_) {
    try {
      ResourceHandle& h = inst_.state().handles->get(index);
      if (h.num_lends) --h.num_lends;
    } catch (const Error&) {
      // The lending handle cannot have been dropped while lent (drop traps),
      // so this only happens after a trap poisoned the instance.
    }
  }
  for (uint32_t index : host_borrows_) {
    try {
      store_.host_handles().remove(index);
    } catch (const Error&) {
    }
  }
  lent_.clear();
  host_borrows_.clear();
}

ResourceTypeRef CallHandles::runtime_type(const abi::Type& type) const {
  const auto& resources = inst_.spaces().resources;
  auto it = resources.find(type.resource().get());
  if (it != resources.end()) return it->second;
  // A host resource named by the host's own type (the elements of a stream
  // the host made, say): the instance's type for it, when it has one.
  for (const auto& [abi_type, runtime_type] : resources)
    if (runtime_type->abi_type.get() == type.resource().get()) return runtime_type;
  throw Error(ErrorKind::Link, "resource type `" + type.resource()->name + "` is not bound in `" + inst_.name() + "`");
}

uint32_t CallHandles::lift_handle(const abi::Type& type, uint32_t index) {
  switch (type.kind()) {
    case abi::TypeKind::Own: {
      const auto rt = runtime_type(type);
      ResourceHandle& h = inst_.state().handles->get(index);
      check_type(h, rt);
      if (!h.own) throw_trap("a borrow handle was passed where an own handle is expected");
      if (h.num_lends) throw_trap("an own handle was passed while it is lent to a call");
      ResourceHandle moved = inst_.state().handles->remove(index);
      return store_.host_handles().add(std::move(moved));
    }
    case abi::TypeKind::Borrow: {
      const auto rt = runtime_type(type);
      ResourceHandle& h = inst_.state().handles->get(index);
      check_type(h, rt);
      ++h.num_lends;
      lent_.push_back(index);
      const uint32_t host = store_.host_handles().add(ResourceHandle{rt, h.rep, false, 0, 0});
      host_borrows_.push_back(host);
      return host;
    }
    case abi::TypeKind::Stream:
    case abi::TypeKind::Future: {
      auto [kind, shared] = Streams::lift_end(inst_, type, index);
      return store_.host_handles().add(kind, std::move(shared));
    }
    case abi::TypeKind::ErrorContext: {
      auto& context = inst_.state().handles->get<ErrorContext>(index, HandleKind::ErrorContext);
      return store_.host_handles().add(HandleKind::ErrorContext, context.shared_from_this());
    }
    default: throw Error(ErrorKind::Usage, std::string("not a handle type: ") + abi::to_string(type.kind()));
  }
}

uint32_t CallHandles::lower_handle(const abi::Type& type, uint32_t host_index) {
  // A bad host handle is the host's mistake, not the guest's trap.
  if (!store_.host_handles().entry(host_index))
    throw_invalid_value(fmt::format("the host holds no handle {}", host_index));
  switch (type.kind()) {
    case abi::TypeKind::Own: {
      const auto rt = runtime_type(type);
      ResourceHandle& h = store_.host_handles().get(host_index);
      if (h.type != rt || !h.own)
        throw_invalid_value(fmt::format("host handle {} is not an own<{}>", host_index, rt->name));
      ResourceHandle moved = store_.host_handles().remove(host_index);
      return inst_.state().handles->add(std::move(moved));
    }
    case abi::TypeKind::Borrow: {
      const auto rt = runtime_type(type);
      const ResourceHandle& h = store_.host_handles().get(host_index);
      if (h.type != rt)
        throw_invalid_value(fmt::format("host handle {} is not a {}", host_index, rt->name));
      // The implementation of a resource sees its own borrows as the rep.
      if (rt->owner == &inst_) return h.rep;
      ++inst_.state().borrows_by_call[call_id_];
      return inst_.state().handles->add(ResourceHandle{rt, h.rep, false, 0, call_id_});
    }
    case abi::TypeKind::Stream:
    case abi::TypeKind::Future:
    case abi::TypeKind::ErrorContext: {
      const HandleKind expected = type.kind() == abi::TypeKind::Stream   ? HandleKind::SharedStream
                                  : type.kind() == abi::TypeKind::Future ? HandleKind::SharedFuture
                                                                         : HandleKind::ErrorContext;
      const HandleTable::Entry& held = store_.host_handles().entry_or_trap(host_index);
      if (held.kind != expected)
        throw_invalid_value(fmt::format("host handle {} is a {}, not a {}", host_index, to_string(held.kind),
                                        to_string(expected)));
      // A stream or future the host made has the element type it was made with.
      if (expected != HandleKind::ErrorContext &&
          !same_element_type(static_cast<const SharedChannel&>(*held.object).elem, type.element()))
        throw_invalid_value(fmt::format("host handle {} is not a {}: its elements are of another type", host_index,
                                        type.to_wit()));
      HandleTable::Entry entry = store_.host_handles().remove_entry(host_index);
      if (expected == HandleKind::ErrorContext) return inst_.state().handles->add(expected, std::move(entry.object));
      return Streams::lower_end(inst_, type, std::move(entry.object));
    }
    default: throw Error(ErrorKind::Usage, std::string("not a handle type: ") + abi::to_string(type.kind()));
  }
}

void CallHandles::check_borrows_of_call() {
  auto it = inst_.state().borrows_by_call.find(call_id_);
  if (it == inst_.state().borrows_by_call.end()) return;
  const uint32_t left = it->second;
  inst_.state().borrows_by_call.erase(it);
  if (left) throw_trap(fmt::format("{} borrowed handle(s) not dropped by the end of the call", left));
}

engine::Extern CallHandles::resource_builtin(Store& store, ComponentInstance& inst, binary::CanonKind kind,
                                ResourceTypeRef type) {
  ComponentInstance* self = &inst;
  Store* s = &store;
  switch (kind) {
    case binary::CanonKind::ResourceNew:
      return store.core().host_func({{CoreType::I32}, {CoreType::I32}},
                                    [self, type](engine::Caller&, std::span<const uint64_t> p, std::span<uint64_t> r) {
                                      if (!self->state().may_leave)
                                        throw_trap("cannot leave component instance: resource.new while may_leave is false");
                                      r[0] = self->state().handles->add(ResourceHandle{type, uint32_t(p[0]), true, 0, 0});
                                    });
    case binary::CanonKind::ResourceRep:
      return store.core().host_func({{CoreType::I32}, {CoreType::I32}},
                                    [self, type](engine::Caller&, std::span<const uint64_t> p, std::span<uint64_t> r) {
                                      const ResourceHandle& h = self->state().handles->get(uint32_t(p[0]));
                                      check_type(h, type);
                                      r[0] = h.rep;
                                    });
    case binary::CanonKind::ResourceDrop:
      return store.core().host_func({{CoreType::I32}, {}},
                                    [self, s, type](engine::Caller&, std::span<const uint64_t> p, std::span<uint64_t>) {
                                      if (!self->state().may_leave)
                                        throw_trap("cannot leave component instance: resource.drop while may_leave is false");
                                      const auto index = uint32_t(p[0]);
                                      ResourceHandle& h = self->state().handles->get(index);
                                      check_type(h, type);
                                      if (h.num_lends) throw_trap("resource.drop of a handle that is lent to a call");
                                      ResourceHandle dropped = self->state().handles->remove(index);
                                      if (!dropped.own) {
                                        auto it = self->state().borrows_by_call.find(dropped.borrow_scope);
                                        if (it != self->state().borrows_by_call.end() && it->second) --it->second;
                                        return;
                                      }
                                      run_destructor(*s, *type, dropped.rep);
                                    });
    default:
      throw Error(ErrorKind::Link, std::string("not a resource built-in: ") + binary::to_string(kind));
  }
}

uint32_t Store::new_resource(const ResourceTypeRef& type, uint32_t rep) {
  if (!type || type->owner) throw Error(ErrorKind::Usage, "new_resource needs a host resource type");
  return host_handles_->add(ResourceHandle{type, rep, true, 0, 0});
}

uint32_t Store::resource_rep(uint32_t handle) {
  const ResourceHandle* h = host_handles_->find(handle);
  if (!h) throw_invalid_value("the host holds no handle " + std::to_string(handle));
  return h->rep;
}

uint32_t Store::resource_rep(uint32_t handle, const ResourceTypeRef& type) {
  const ResourceHandle* h = host_handles_->find(handle);
  if (!h) throw_invalid_value("the host holds no handle " + std::to_string(handle));
  if (h->type != type)
    throw_invalid_value(fmt::format("handle {} is a `{}`, not a `{}`", handle, h->type ? h->type->name : "?",
                                    type ? type->name : "?"));
  return h->rep;
}

void Store::drop_resource(uint32_t handle) {
  const ResourceHandle* h = host_handles_->find(handle);
  if (!h) throw_invalid_value("the host holds no handle " + std::to_string(handle));
  if (!h->own) throw_invalid_value("handle " + std::to_string(handle) + " is a borrow; only own handles are dropped");
  const ResourceHandle dropped = host_handles_->remove(handle);
  run_destructor(*this, *dropped.type, dropped.rep);
}

}  // namespace cmhost::runtime
