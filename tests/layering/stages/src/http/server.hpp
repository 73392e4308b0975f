// an HTTP server
#include "wasi/p3/streams.hpp"
