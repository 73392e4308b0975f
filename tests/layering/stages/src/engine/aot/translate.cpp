#include "../interp/wabt_backend.hpp"
