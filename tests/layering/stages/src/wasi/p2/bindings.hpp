// WASI 0.2 bindings
