// The abi stage of the layering check fixture.
#pragma once
