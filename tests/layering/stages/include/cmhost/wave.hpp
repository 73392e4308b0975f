// WAVE: a stage of its own, after abi.
