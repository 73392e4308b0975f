// the WASI core: configuration
