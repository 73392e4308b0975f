// The ahead-of-time backend: engine.hpp on wasm2c-translated modules
// compiled by the system C compiler (artifact.hpp), run with cmhost's own
// runtime support (rt.h).
#pragma once

#include <memory>

#include "cmhost/engine/backend.hpp"

namespace cmhost::engine {

std::unique_ptr<Engine> make_aot_engine(EngineConfig config);

}  // namespace cmhost::engine
