// The canonical ABI stage: value types, layout, dynamic values, and compiled
// lift/lower programs. No engine dependency: guest memory is an interface.
#pragma once

#include "cmhost/abi/canon.hpp"
#include "cmhost/abi/copy.hpp"
#include "cmhost/abi/host_memory.hpp"
#include "cmhost/abi/type.hpp"
#include "cmhost/abi/val.hpp"
#include "cmhost/error.hpp"
