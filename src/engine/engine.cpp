// The backend an EngineConfig names. A new backend is a folder beside interp/ and aot/,
// one Backend value and one case here.
#include <mutex>

#include "cmhost/engine/backend.hpp"
#include "cmhost/error.hpp"
#include "interp/interp_engine.hpp"
#include "aot/aot_engine.hpp"

namespace cmhost::engine {

const char* to_string(Backend backend) noexcept {
  switch (backend) {
    case Backend::Interpreter: return "interpreter";
    case Backend::AheadOfTime: return "ahead-of-time";
  }
  return "unknown";
}

struct Engine::EpochWakers {
  std::mutex mutex;
  std::vector<std::weak_ptr<std::function<void()>>> wakers;
};

Engine::Engine() : wakers_(std::make_shared<EpochWakers>()) {}

void Engine::increment_epoch() {
  epoch_->fetch_add(1, std::memory_order_relaxed);
  std::vector<std::shared_ptr<std::function<void()>>> live;
  {
    const std::lock_guard<std::mutex> lock(wakers_->mutex);
    for (const auto& weak : wakers_->wakers)
      if (auto wake = weak.lock()) live.push_back(std::move(wake));
  }
  for (const auto& wake : live) (*wake)();
}

std::shared_ptr<void> Engine::on_epoch(std::function<void()> wake) {
  auto token = std::make_shared<std::function<void()>>(std::move(wake));
  const std::lock_guard<std::mutex> lock(wakers_->mutex);
  std::erase_if(wakers_->wakers, [](const auto& weak) { return weak.expired(); });
  wakers_->wakers.push_back(token);
  return token;
}

std::unique_ptr<Artifact> Engine::load_artifact(const std::string& path, std::span<const uint8_t>) {
  throw Error(ErrorKind::Usage, std::string("the ") + to_string(config().backend) +
                                    " backend compiles modules at run time and loads no artifacts (" + path + ")");
}

std::unique_ptr<Artifact> Engine::cached_artifact(std::span<const uint8_t>,
                                                 const std::vector<std::span<const uint8_t>>&) {
  return nullptr;
}

void Engine::write_artifact(std::span<const uint8_t>, const std::vector<std::span<const uint8_t>>&,
                            const std::string& path) {
  throw Error(ErrorKind::Usage, std::string("the ") + to_string(config().backend) +
                                    " backend compiles modules at run time and writes no artifacts (" + path + ")");
}

std::unique_ptr<Engine> make_engine(EngineConfig config) {
  switch (config.backend) {
    case Backend::Interpreter: return make_interpreter_engine(std::move(config));
    case Backend::AheadOfTime: return make_aot_engine(std::move(config));
  }
  throw Error(ErrorKind::Usage, "unknown engine backend " + std::to_string(static_cast<int>(config.backend)));
}

}  // namespace cmhost::engine
