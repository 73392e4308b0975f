// Engine and Component: loading a component, once, for any number of stores.
#include <fstream>
#include <iterator>

#include "binary/binary.hpp"
#include "embed/impl.hpp"
#include "support/files.hpp"
#include "validate/validate.hpp"

namespace cmhost {

Engine::Engine(engine::EngineConfig config) : core_(engine::make_engine(std::move(config))) {}
Engine::Engine(const Engine&) = default;
Engine& Engine::operator=(const Engine&) = default;
Engine::Engine(Engine&&) noexcept = default;
Engine& Engine::operator=(Engine&&) noexcept = default;
Engine::~Engine() = default;
const std::shared_ptr<engine::Engine>& Engine::shared_core() const {
  if (!core_) throw Error(ErrorKind::Usage, "this Engine was moved from: use the Engine it was moved to");
  return core_;
}
engine::Engine& Engine::core() { return *shared_core(); }
void Engine::increment_epoch() { shared_core()->increment_epoch(); }

Component Component::compiled(const std::shared_ptr<engine::Engine>& core,
                              std::shared_ptr<const std::vector<uint8_t>> bytes) {
  const auto decoded = binary::decode_component(*bytes);
  auto plan = validate::validate_component(decoded, *bytes);
  Component c;
  c.impl_ = std::make_shared<Impl>(Impl{core, bytes, runtime::compile(*core, std::move(plan), *bytes)});
  return c;
}

Component Component::from_bytes(const Engine& engine, std::vector<uint8_t> bytes) {
  return compiled(engine.shared_core(), std::make_shared<const std::vector<uint8_t>>(std::move(bytes)));
}

Component Component::from_bytes_with_artifact(const Engine& engine, std::vector<uint8_t> bytes,
                                               const std::string& artifact_path) {
  auto owned = std::make_shared<const std::vector<uint8_t>>(std::move(bytes));
  const auto decoded = binary::decode_component(*owned);
  auto plan = validate::validate_component(decoded, *owned);
  const std::unique_ptr<engine::Artifact> artifact = engine.shared_core()->load_artifact(artifact_path, *owned);
  Component c;
  c.impl_ = std::make_shared<Impl>(Impl{engine.shared_core(), owned, runtime::compile(*artifact, std::move(plan))});
  return c;
}

void Component::write_artifact(const Engine& engine, const std::vector<uint8_t>& bytes, const std::string& artifact_path) {
  const auto decoded = binary::decode_component(bytes);
  const auto plan = validate::validate_component(decoded, bytes);
  engine.shared_core()->write_artifact(bytes, runtime::module_bytes(plan, bytes), artifact_path);
}

Component Component::from_file(const Engine& engine, const std::string& path) {
  return from_bytes(engine, support::read_file(path));
}

Component Component::from_file_with_artifact(const Engine& engine, const std::string& path,
                                              const std::string& artifact_path) {
  return from_bytes_with_artifact(engine, support::read_file(path), artifact_path);
}

const ComponentType& Component::type() const { return impl_->compiled.plan.root->type; }

std::optional<Component> Component::with_faster_code() const {
  const auto& ready = impl_->compiled.faster_code_check;
  if (!ready || !ready()) return std::nullopt;
  return compiled(impl_->engine, impl_->bytes);
}

}  // namespace cmhost
