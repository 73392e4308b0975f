#include "wasi/p2/bindings.hpp"
#include "cmhost/wasi.hpp"
