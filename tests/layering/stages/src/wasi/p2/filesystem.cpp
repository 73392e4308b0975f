#include "cmhost/wasi.hpp"
#include "http/server.hpp"
