// The runtime stage of the layering check fixture.
#pragma once
#include "cmhost/abi.hpp"
