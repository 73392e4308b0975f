// WASI 0.3 streams
#include "http/server.hpp"
