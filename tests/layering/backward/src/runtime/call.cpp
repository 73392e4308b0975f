// Forward: runtime may use abi.
#include "cmhost/abi.hpp"
