// The abi stage of the layering check fixture.
#pragma once
namespace cmhost::abi {
// Backward: a public header naming a private stage's type.
runtime::Store& store_of(int instance);
}  // namespace cmhost::abi
