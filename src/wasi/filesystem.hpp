// wasi:filesystem on the host's file system, confined to preopened
// directories (src/wasi/filesystem.cpp).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "cmhost/wasi.hpp"
#include "common.hpp"

namespace cmhost::wasi::detail {

namespace fs = ::wasi::filesystem;

// The preopens as descriptors for the guest, opened afresh for each call of
// get-directories. A host directory that cannot be opened is an Error (Usage).
std::vector<std::tuple<abi::typed::Own<fs::types::Descriptor>, std::string>> open_preopens(
    Caller& caller, const std::vector<Preopen>& preopens, const std::shared_ptr<const Handles>& handles);

// Checks that every preopen's host directory can be opened (at link time,
// so a wrong --dir is reported before the guest runs).
void check_preopens(const std::vector<Preopen>& preopens);

// The filesystem error behind a stream error, if it came from a file.
std::optional<fs::types::ErrorCode> filesystem_error_code(io::error::Error& error);

}  // namespace cmhost::wasi::detail
