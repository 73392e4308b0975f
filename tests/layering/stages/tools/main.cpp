#include "cmhost/wasi.hpp"
#include "cmhost/wave.hpp"
