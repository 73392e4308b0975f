// Instance and Func: finding and calling a component's exports.
#include <fmt/core.h>

#include "cmhost/names.hpp"
#include "embed/impl.hpp"
#include "host/type_name.hpp"
#include "runtime/scheduler.hpp"

namespace cmhost {

const FuncType& Func::type() const { return impl_->func->type(); }

std::vector<Val> Func::call(Store& store, std::span<const Val> args) const {
  return impl_->func->call(store.impl_->runtime, args);
}

PendingCall Func::call_async(Store& store, std::span<const Val> args) const {
  return PendingCall(
      std::make_shared<PendingCall::Impl>(impl_->func->call_async(store.impl_->runtime, args), &store.impl_->runtime));
}

bool PendingCall::done() const { return impl_->result->resolved; }

bool PendingCall::cancelled() const { return impl_->result->cancelled; }

void PendingCall::cancel(Store& store) {
  if (&store.impl_->runtime != impl_->store) throw Error(ErrorKind::Usage, "the call was started in another store");
  runtime::cancel_async_call(store.impl_->runtime, const_cast<runtime::AsyncCallResult&>(*impl_->result));
}

std::vector<Val> PendingCall::wait(Store& store) {
  const runtime::AsyncCallResult* result = impl_->result.get();
  if (&store.impl_->runtime != impl_->store) throw Error(ErrorKind::Usage, "the call was started in another store");
  if (!result->resolved && store.impl_->runtime.scheduler().current())
    throw Error(ErrorKind::Usage, "PendingCall::wait cannot run inside a guest's call: the embedder's loop ends it");
  store.impl_->runtime.scheduler().run_until([result] { return result->resolved; }, "an async call's result");
  return results();
}

void PendingCall::on_done(Store& store, std::function<void()> done) {
  if (&store.impl_->runtime != impl_->store) throw Error(ErrorKind::Usage, "the call was started in another store");
  store.impl_->loop.when_resolved(impl_->result, std::move(done));
}

std::vector<Val> PendingCall::results() {
  if (!impl_->result->resolved) throw Error(ErrorKind::Usage, "the call has not returned yet: run the event loop");
  if (impl_->taken) throw Error(ErrorKind::Usage, "the call's results were taken already");
  if (impl_->result->cancelled) throw Error(ErrorKind::Usage, "the call was cancelled: it has no results");
  impl_->taken = true;
  return std::move(const_cast<runtime::AsyncCallResult&>(*impl_->result).results);
}

void Func::call_reading(Store& store, std::span<const Val> args, const ResultReader& read) const {
  impl_->func->call_reading(store.impl_->runtime, args, read);
}

void Func::call_lowering(Store& store, const ArgLowerer& lower, const ResultReader& read) const {
  impl_->func->call_lowering(store.impl_->runtime, lower, read);
}

const ComponentType& Instance::type() const { return *impl_->instance->type(); }

std::vector<Func> Instance::funcs() const {
  std::vector<Func> out;
  auto add = [&](std::string name, const runtime::FuncRef& f) {
    out.push_back(Func(std::move(name), std::make_shared<const Func::Impl>(f)));
  };
  for (const auto& [name, item] : impl_->instance->exports().exports) {
    if (item.sort == Sort::Func) add(name, item.func);
    if (item.sort == Sort::Instance)
      for (const auto& [inner, inner_item] : item.instance->exports)
        if (inner_item.sort == Sort::Func) add(name + "#" + inner, inner_item.func);
  }
  return out;
}

bool Instance::made_by(const void* pre) const { return pre && impl_->made_by.get() == pre; }

Func Instance::func(std::string_view name) const {
  // The exact name first, without listing every export (a request's
  // instance looks its handler up each time).
  const auto& exports = impl_->instance->exports();
  const size_t hash = name.find('#');
  if (const runtime::Item* outer = exports.find(name.substr(0, hash))) {
    const runtime::Item* item = outer;
    if (hash != std::string_view::npos)
      item = outer->sort == Sort::Instance ? outer->instance->find(name.substr(hash + 1)) : nullptr;
    if (item && item->sort == Sort::Func)
      return Func(std::string(name), std::make_shared<const Func::Impl>(item->func));
  }
  const auto all = funcs();
  for (const auto& f : all)
    if (f.name() == name) return f;
  // An interface function named without its version, if only one matches.
  if (const auto wanted = parse_extern_path(name);
      wanted && wanted->kind == ParsedExternName::Kind::Interface && !wanted->version && !wanted->member.empty()) {
    const Func* match = nullptr;
    size_t matches = 0;
    for (const auto& f : all) {
      const auto candidate = parse_extern_path(f.name());
      if (candidate && candidate->kind == ParsedExternName::Kind::Interface &&
          candidate->namespace_name == wanted->namespace_name && candidate->package == wanted->package &&
          candidate->interface == wanted->interface && candidate->member == wanted->member) {
        match = &f;
        ++matches;
      }
    }
    if (matches == 1) return *match;
    if (matches > 1)
      throw Error(ErrorKind::Usage, fmt::format("`{}` is ambiguous: several versions are exported", name));
  }
  std::string known;
  for (const auto& f : all) known += (known.empty() ? "" : ", ") + f.name();
  throw Error(ErrorKind::Usage, fmt::format("no exported function `{}` (exports: {})", name,
                                            known.empty() ? "none" : known));
}

std::string detail::describe_misfit(const abi::typed::SignatureFit& fit, const FuncType& type, std::string_view side,
                                   std::string_view cpp) {
  using Part = abi::typed::SignatureFit::Part;
  switch (fit.part) {
    case Part::None: return "";
    case Part::ParamCount:
      return fmt::format("the {} takes {} parameters, the {} {}", side, type.params.size(), cpp, fit.param);
    case Part::Param:
      return fmt::format("parameter {} (`{}`) is {}", fit.param + 1, type.param_names[fit.param],
                         type.params[fit.param]->to_wit());
    case Part::ResultUnexpected: return fmt::format("the {} returns {}, the {} nothing", side, type.result->to_wit(), cpp);
    case Part::ResultMissing: return fmt::format("the {} returns nothing", side);
    case Part::Result: return "the result is " + type.result->to_wit();
  }
  return "";
}

void Instance::check_typed(const Func& f, const std::type_info& signature, abi::typed::HandleTypes& handles,
                           Mismatch mismatch) {
  const runtime::Func& func = *f.impl_->func;
  std::string why;
  if (func.is_host()) why = "it is a host function: call it with Func::call";
  else if (func.memory64()) why = "typed calls read and write 32-bit memories only, and its memory is 64-bit";
  else if (func.type().async) why = "the export is async";
  else if (func.params_spilled()) why = "its parameters are passed in memory (more than 16 core values): call Func::call";
  else why = mismatch(func.type(), func.results_spilled(), handles);
  if (why.empty()) return;
  throw Error(ErrorKind::Usage, fmt::format("`{}` is {}; the C++ signature {} does not match it: {}", f.name(),
                                            to_string(f.type()), host::type_name(signature), why));
}

void Instance::check_typed_async(const Func& f, const std::type_info& signature,
                                 FunctionRef<std::string(const std::shared_ptr<const FuncType>&)> mismatch) {
  const runtime::Func& func = *f.impl_->func;
  std::string why;
  if (func.is_host()) why = "it is a host function: call it with Func::call";
  else if (!func.type().async) why = "the export is not async: call it with typed_func";
  else why = mismatch(func.type_ref());
  if (why.empty()) return;
  throw Error(ErrorKind::Usage, fmt::format("`{}` is {}; the C++ signature {} does not match it: {}", f.name(),
                                            to_string(f.type()), host::type_name(signature), why));
}

}  // namespace cmhost
