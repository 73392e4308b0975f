// Backward, deliberately: abi must not use runtime.
#include "cmhost/runtime.hpp"
