// wasi:filesystem 0.2 on the host's file system, confined to preopened
// directories by the core's openat2 confinement (src/wasi/core/confine.hpp)
// and carried out by the core's files (src/wasi/core/files.hpp), which 0.3
// shares; src/wasi/p2/filesystem.cpp converts to and from the 0.2 bindings.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "cmhost/wasi.hpp"
#include "common.hpp"
#include "wasi/core/confine.hpp"

namespace cmhost::wasi::detail {

namespace fs = ::cmhost::wasi::bindings::wasi::filesystem;

// The preopens as descriptors for the guest, opened afresh for each call of
// get-directories. A host directory that cannot be opened is an Error (Usage).
std::vector<std::tuple<abi::typed::Own<fs::types::Descriptor>, std::string>> open_preopens(
    Caller& caller, const std::vector<Preopen>& preopens, const std::shared_ptr<const Handles>& handles);

// The filesystem error behind a stream error, if it came from a file.
std::optional<fs::types::ErrorCode> filesystem_error_code(io::error::Error& error);

}  // namespace cmhost::wasi::detail
