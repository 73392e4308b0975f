#include "executor.hpp"

#include <fmt/core.h>

#include "values.hpp"

namespace cmhost::tools::wast {

namespace {

std::string describe(const Error& e) { return fmt::format("{}: {}", to_string(e.kind()), e.what()); }

// Whether cmhost's error means it refused the component (decode, validation,
// linking) rather than ran it and trapped.
bool is_rejection(const Error& e) {
  return e.kind() == ErrorKind::Decode || e.kind() == ErrorKind::Validate || e.kind() == ErrorKind::Link;
}

// The outcome of an error where none was expected.
Outcome outcome_of(const Error& e) {
  if (e.kind() == ErrorKind::Trap) return Outcome::Trap;
  return is_rejection(e) ? Outcome::Validation : Outcome::Error;
}

// An assert_trap whose trap came from an `unreachable` while the script
// expects another message: the scripts put `unreachable` where control must
// not arrive, so this trap is not the one asked about. The engine's message
// for the instruction is exactly this.
bool trapped_at_sentinel(const std::string& expected, const Error& trap) {
  constexpr std::string_view kUnreachableTrap = "unreachable executed";
  return std::string_view(trap.what()) == kUnreachableTrap && expected.find("unreachable") == std::string::npos;
}

// An expected trap: passed, or unconfirmed when it came from the script's
// own `unreachable`.
void expected_trap(Result& r, const std::string& expected, const Error& trap) {
  if (trapped_at_sentinel(expected, trap))
    r.set(Status::Unconfirmed, Outcome::Unreachable, trap.what());
  else
    r.set(Status::Passed, Outcome::Pass, trap.what());
}

// The wabt 1.0.32 interpreter and wasm2c cannot load some core-wasm features
// the suite uses; such components are skipped (the issue of the engine, not
// of cmhost's component model). Recognised by the engine's message.
std::optional<std::string> engine_limitation(const Error& e) {
  const std::string_view message = e.what();
  if (message.find("try_table") != std::string_view::npos ||
      message.find("unexpected opcode: 0x1f") != std::string_view::npos)
    return "needs `try_table`, which the wabt 1.0.32 interpreter lacks";
  if (message.find("cannot link imported exception tags") != std::string_view::npos ||
      message.find("cannot link exported exception tags") != std::string_view::npos)
    return "needs exception tags shared between core modules, which the ahead-of-time backend (wasm2c 1.0.32) lacks";
  return std::nullopt;
}

std::string results_text(const FuncType& type, const std::vector<Val>& results) {
  if (!type.result || results.empty()) return "no result";
  try {
    return to_wave(*type.result, results[0]);
  } catch (const std::exception&) {
    return "a value of type " + type.result->to_wit();
  }
}

std::string expected_text(const std::vector<Value>& expected) {
  if (expected.empty()) return "no result";
  std::string out;
  for (const auto& v : expected) out += (out.empty() ? "" : " ") + v.source;
  return out;
}

}  // namespace

Executor::Executor(const engine::EngineConfig& config) : engine_(config), store_(std::make_unique<Store>(engine_)) {
  current_.unavailable.reason = "no component instance yet";
}

Result Executor::run(const Command& command, const Assembled* binary) {
  try {
    return run_command(command, binary);
  } catch (const std::exception& e) {
    Result r;
    r.line = command.line;
    r.command = command.keyword;
    r.set(Status::Failed, Outcome::Error, std::string("internal error: ") + e.what());
    return r;
  }
}

void Executor::restore_definition(const Command& command, const Assembled* binary) {
  if (command.kind != CommandKind::ComponentDefinition) return;
  Result ignored;
  Definition d;
  d.component = compile(binary, ignored);
  d.unavailable = {ignored.status, ignored.outcome, ignored.detail};
  definitions_[command.name] = std::move(d);
}

void Executor::lose_instances(Outcome outcome, const std::string& why) {
  for (auto& [id, slot] : instances_) slot = Slot{std::nullopt, {Status::Failed, outcome, why}};
  current_ = Slot{std::nullopt, {Status::Failed, outcome, why}};
  registered_.clear();
}

std::optional<Component> Executor::compile(const Assembled* binary, Result& result) {
  if (!binary) {
    result.set(Status::Failed, Outcome::Error, "internal error: the component was not assembled");
    return std::nullopt;
  }
  if (!binary->ok) {
    result.set(Status::Skipped, Outcome::Skip, "jco cannot assemble the text: " + binary->error);
    return std::nullopt;
  }
  try {
    return Component::from_bytes(engine_, binary->wasm);
  } catch (const Error& e) {
    if (auto limitation = engine_limitation(e))
      result.set(Status::Skipped, Outcome::Skip, *limitation);
    else
      result.set(Status::Failed, outcome_of(e), describe(e));
    return std::nullopt;
  }
}

Instance Executor::instantiate(const Component& component) {
  Linker linker;
  for (const auto& [name, instance] : registered_) linker.define_instance(name, instance);
  return linker.instantiate(*store_, component);
}

// The latest instance becomes current; a named one can be invoked by its id
// and, as wasmtime's runner does, is registered under its name (without `$`)
// for later components' instance imports.
void Executor::make_current(const std::string& id, Slot slot) {
  current_ = slot;
  if (id.empty()) return;
  instances_[id] = slot;
  if (slot.instance) registered_.insert_or_assign(id.substr(1), *slot.instance);
  else registered_.erase(id.substr(1));
}

Result Executor::run_command(const Command& command, const Assembled* binary) {
  Result r;
  r.line = command.line;
  r.command = command.keyword;
  r.expected_message = command.message;
  switch (command.kind) {
    case CommandKind::Component: {
      auto component = compile(binary, r);
      if (!component) {
        const std::string why =
            fmt::format("the component at line {} {}: {}", command.line, to_string(r.status), r.detail);
        make_current(command.name, Slot{std::nullopt, {r.status, r.outcome, why}});
        return r;
      }
      try {
        make_current(command.name, Slot{instantiate(*component), {}});
      } catch (const Error& e) {
        r.set(Status::Failed, outcome_of(e), describe(e));
        make_current(command.name,
                     Slot{std::nullopt, {Status::Failed, r.outcome,
                                         fmt::format("the component at line {} failed to instantiate", command.line)}});
      }
      return r;
    }
    case CommandKind::ComponentDefinition: {
      Definition d;
      d.component = compile(binary, r);
      if (!d.component)
        d.unavailable = {r.status, r.outcome,
                         fmt::format("the definition at line {} {}: {}", command.line, to_string(r.status), r.detail)};
      definitions_[command.name] = std::move(d);
      return r;
    }
    case CommandKind::ComponentInstance: {
      const auto it = definitions_.find(command.definition);
      if (it == definitions_.end()) {
        r.set(Status::Failed, Outcome::Error,
              command.definition.empty() ? "no unnamed component definition"
                                         : "no component definition " + command.definition);
        make_current(command.name, Slot{std::nullopt, {Status::Failed, Outcome::Error, r.detail}});
        return r;
      }
      if (!it->second.component) {
        const Unavailable& why = it->second.unavailable;
        r.set(why.status, why.outcome, why.reason);
        make_current(command.name, Slot{std::nullopt, why});
        return r;
      }
      try {
        make_current(command.name, Slot{instantiate(*it->second.component), {}});
      } catch (const Error& e) {
        r.set(Status::Failed, outcome_of(e), describe(e));
        make_current(command.name,
                     Slot{std::nullopt, {Status::Failed, r.outcome,
                                         fmt::format("the instance at line {} failed to instantiate", command.line)}});
      }
      return r;
    }
    case CommandKind::Register: {
      const Instance* instance = find_instance(command.definition, r);
      if (!instance) return r;
      registered_.insert_or_assign(command.name, *instance);
      return r;
    }
    case CommandKind::Invoke:
    case CommandKind::AssertReturn:
    case CommandKind::AssertTrap:
    case CommandKind::AssertExhaustion:
      if (command.subject) {
        // assert_trap of a component: its instantiation must trap.
        const Command& subject = *command.subject;
        std::optional<Component> component;
        if (subject.kind == CommandKind::ComponentInstance) {
          const auto it = definitions_.find(subject.definition);
          if (it == definitions_.end()) {
            r.set(Status::Failed, Outcome::Error, "no component definition " + subject.definition);
            return r;
          }
          if (!it->second.component) {
            const Unavailable& why = it->second.unavailable;
            r.set(why.status, why.outcome, why.reason);
            return r;
          }
          component = it->second.component;
        } else {
          component = compile(binary, r);
          if (!component) return r;
        }
        try {
          instantiate(*component);
          r.set(Status::Failed, Outcome::NoTrap, "instantiated without a trap, expected \"" + command.message + "\"");
        } catch (const Error& e) {
          if (e.kind() == ErrorKind::Trap)
            expected_trap(r, command.message, e);
          else
            r.set(Status::Failed, outcome_of(e), describe(e));
        }
        return r;
      }
      return invoke(command);
    case CommandKind::AssertInvalid:
    case CommandKind::AssertMalformed: {
      // Passes only when cmhost itself rejects the binary: jco refusing the
      // text proves nothing about cmhost, so that is a skip.
      if (!binary || !binary->ok) {
        (void)compile(binary, r);
        return r;
      }
      try {
        (void)Component::from_bytes(engine_, binary->wasm);
        r.set(Status::Failed, Outcome::Validation, "cmhost accepted the component, expected \"" + command.message + "\"");
      } catch (const Error& e) {
        const bool rejected = e.kind() == ErrorKind::Decode || e.kind() == ErrorKind::Validate;
        r.set(rejected ? Status::Passed : Status::Failed, rejected ? Outcome::Pass : Outcome::Error, describe(e));
      }
      return r;
    }
    case CommandKind::AssertUnlinkable: {
      auto component = compile(binary, r);
      if (!component) return r;
      try {
        instantiate(*component);
        r.set(Status::Failed, Outcome::Validation, "linked, expected \"" + command.message + "\"");
      } catch (const Error& e) {
        const bool unlinkable = e.kind() == ErrorKind::Link;
        r.set(unlinkable ? Status::Passed : Status::Failed, unlinkable ? Outcome::Pass : outcome_of(e), describe(e));
      }
      return r;
    }
    case CommandKind::Unsupported:
      r.set(Status::Failed, Outcome::Error, command.message);
      return r;
  }
  return r;
}

const Instance* Executor::find_instance(const std::string& name, Result& r) const {
  const Slot* slot = &current_;
  if (!name.empty()) {
    const auto it = instances_.find(name);
    if (it == instances_.end()) {
      r.set(Status::Failed, Outcome::Error, "no instance " + name);
      return nullptr;
    }
    slot = &it->second;
  }
  if (!slot->instance) {
    r.set(slot->unavailable.status, slot->unavailable.outcome, slot->unavailable.reason);
    return nullptr;
  }
  return &*slot->instance;
}

Result Executor::invoke(const Command& command) {
  Result r;
  r.line = command.line;
  r.command = command.keyword;
  r.expected_message = command.message;
  const Invoke& call = *command.invoke;
  const Instance* instance = find_instance(call.instance, r);
  if (!instance) return r;
  std::optional<Func> func;
  std::vector<Val> args;
  try {
    func = instance->func(call.name);
    const auto& params = func->type().params;
    if (params.size() != call.args.size())
      throw Error(ErrorKind::Usage, fmt::format("`{}` takes {} arguments, the script passes {}", call.name,
                                                params.size(), call.args.size()));
    for (size_t i = 0; i < params.size(); ++i) args.push_back(to_val(call.args[i], *params[i]));
  } catch (const Error& e) {
    r.set(Status::Failed, Outcome::Error, e.what());
    return r;
  }
  const FuncType& type = func->type();
  std::vector<Val> results;
  try {
    results = func->call(*store_, args);
  } catch (const Error& e) {
    const bool trap_expected = command.kind == CommandKind::AssertTrap || command.kind == CommandKind::AssertExhaustion;
    if (e.kind() == ErrorKind::Trap && trap_expected)
      expected_trap(r, command.message, e);
    else
      r.set(Status::Failed, outcome_of(e), describe(e));
    return r;
  }
  switch (command.kind) {
    case CommandKind::AssertTrap:
    case CommandKind::AssertExhaustion:
      r.set(Status::Failed, Outcome::NoTrap,
            fmt::format("returned {}, expected a trap \"{}\"", results_text(type, results), command.message));
      return r;
    case CommandKind::AssertReturn: {
      const size_t arity = type.result ? 1 : 0;
      if (command.expected.size() != arity) {
        r.set(Status::Failed, Outcome::WrongValue,
              fmt::format("expected {}, got {}", expected_text(command.expected), results_text(type, results)));
        return r;
      }
      try {
        if (arity == 1 && !matches(command.expected[0], *type.result, results.at(0)))
          r.set(Status::Failed, Outcome::WrongValue,
                fmt::format("expected {}, got {}", expected_text(command.expected), results_text(type, results)));
      } catch (const Error& e) {
        r.set(Status::Failed, Outcome::WrongValue, fmt::format("{} (got {})", e.what(), results_text(type, results)));
      }
      return r;
    }
    default: return r;  // a bare invoke passes when it returns
  }
}

}  // namespace cmhost::tools::wast
