// Runs the commands of one script against the cmhost embedder API, keeping
// the script's state: definitions by `$id`, instances by `$id`, the current
// instance (the latest one made), and instances registered by name for later
// components to import.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>

#include "cmhost/cmhost.hpp"
#include "assembler.hpp"
#include "report.hpp"
#include "script.hpp"

namespace cmhost::tools::wast {

class Executor {
 public:
  explicit Executor(const engine::EngineConfig& config = {});

  // Runs one command. `binary` is its component's binary (or jco's refusal)
  // when the command has a component. Never throws.
  Result run(const Command& command, const Assembled* binary);

  // Used after an abandoned command: definitions are compiled again (they
  // have no side effects), while instances are gone, for `why` (a crash or
  // a timeout).
  void restore_definition(const Command& command, const Assembled* binary);
  void lose_instances(Outcome outcome, const std::string& why);

 private:
  // Why something a later command needs is unavailable; a skip propagates as
  // a skip, anything else as a failure.
  struct Unavailable {
    Status status = Status::Failed;
    Outcome outcome = Outcome::Error;
    std::string reason;
  };
  struct Definition {
    std::optional<Component> component;
    Unavailable unavailable;  // when there is no component
  };
  struct Slot {
    std::optional<Instance> instance;
    Unavailable unavailable;  // when there is no instance
  };

  Result run_command(const Command& command, const Assembled* binary);
  // The component of a command, or the result that ends the command.
  std::optional<Component> compile(const Assembled* binary, Result& result);
  Instance instantiate(const Component& component);
  void make_current(const std::string& id, Slot slot);
  Result invoke(const Command& command);
  // The named instance (the current one for ""), or null with `r` saying why.
  const Instance* find_instance(const std::string& name, Result& r) const;

  Engine engine_;
  std::unique_ptr<Store> store_;
  std::map<std::string, Definition> definitions_;  // "" for the latest unnamed one
  std::map<std::string, Slot> instances_;
  Slot current_;
  std::map<std::string, Instance> registered_;  // name -> instance, for instance imports
};

}  // namespace cmhost::tools::wast
