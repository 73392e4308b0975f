// cmhost::wasi's entry points (cmhost/wasi.hpp): WASI 0.2 and 0.3 on one
// linker over one configuration, and `run` calling whichever run the
// component exports. Here because this stage sees both versions.
#include "cmhost/wasi.hpp"

#include <memory>

#include "cli.hpp"
#include "clocks.hpp"
#include "filesystem.hpp"
#include "random.hpp"
#include "sockets.hpp"
#include "wasi/core/confine.hpp"
#include "wasi/core/stdio.hpp"
#include "wasi/p2/p2.hpp"

namespace cmhost::wasi {

void add_to_linker(Linker& linker, const WasiConfig& config) {
  core::check_preopens(config.preopens);
  // One set of stdio descriptors for both versions: their writes reach one
  // stdout in the order they happen.
  auto stdio = std::make_shared<const core::StdioFds>(config);
  p2::add_to_linker(linker, config, stdio);
  p3::add_cli(linker, config, stdio);
  p3::add_clocks(linker, config);
  p3::add_random(linker, config);
  p3::add_filesystem(linker, config);
  p3::add_sockets(linker, config);
}

int run(Store& store, const Instance& instance) {
  for (const Func& f : instance.funcs())
    if (f.name().starts_with("wasi:cli/run@0.3.") && f.name().ends_with("#run")) return p3::run(store, f);
  return p2::run(store, instance);
}

}  // namespace cmhost::wasi
