#include "cmhost/wasi.hpp"
#include "wasi/p2/bindings.hpp"
