#include "cmhost/abi/type.hpp"
#include "cmhost/cmhost.hpp"
