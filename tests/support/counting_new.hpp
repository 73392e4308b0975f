// Every operator new of the test binary that links counting_new.cpp is
// counted: how a test shows that code allocates nothing on the heap.
#pragma once

#include <cstdint>

namespace cmhost::checks {

uint64_t heap_allocations();

}  // namespace cmhost::checks
