// cmhost-aot-build: the process a tiered engine starts to build a big
// component's optimized artifact in the background (tiers.hpp). It is
// started afresh rather than forked from the engine's process, which may
// have threads.
#include "tiers.hpp"

int main() { return cmhost::engine::aot::run_background_build(); }
