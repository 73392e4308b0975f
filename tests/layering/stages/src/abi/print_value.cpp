#include "cmhost/wave.hpp"
