// The dynamic lanes' walk: a list<operation> lifted into Vals (or one
// operation of a stream), delivered to the sink field by field.
#pragma once

#include "cmhost/abi/val.hpp"
#include "sink.hpp"

namespace cmhost::bench::boundary {

void deliver_vals(const abi::Val& operations, Sink& sink);
void deliver_val(const abi::Val& operation, Sink& sink);

}  // namespace cmhost::bench::boundary
