// The dynamic lane's walk: a list<operation> lifted into Vals, delivered to
// the sink field by field.
#pragma once

#include "cmhost/abi/val.hpp"
#include "sink.hpp"

namespace cmhost::bench::boundary {

void deliver_vals(const abi::Val& operations, Sink& sink);

}  // namespace cmhost::bench::boundary
