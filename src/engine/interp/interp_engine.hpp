// The interpreter backend: engine.hpp on wabt's interpreter (wabt_backend.hpp).
#pragma once

#include <memory>

#include "cmhost/engine/backend.hpp"

namespace cmhost::engine {

std::unique_ptr<Engine> make_interpreter_engine(EngineConfig config);

}  // namespace cmhost::engine
