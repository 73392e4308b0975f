// The JSON spelling of types and values used by the reference ABI vectors
// (see shared/abi-vectors/README.md), converted to and from cmhost's own.
#pragma once

#include <nlohmann/json.hpp>

#include "cmhost/abi.hpp"

namespace cmhost::tools {

abi::TypeRef type_from_json(const nlohmann::json& j);
abi::Val val_from_json(const abi::Type& type, const nlohmann::json& j);
// With canonicalize_nan, every NaN is written as the canonical NaN.
nlohmann::json val_to_json(const abi::Type& type, const abi::Val& v, bool canonicalize_nan = false);

abi::StringEncoding encoding_from_json(const nlohmann::json& j);
abi::AddrWidth width_from_json(const nlohmann::json& j);

std::vector<uint8_t> bytes_from_hex(const std::string& hex);
std::string hex_of(const uint8_t* data, size_t size);

// Where two JSON documents first differ, as "path: expected X, got Y".
std::string first_difference(const nlohmann::json& expected, const nlohmann::json& actual,
                             const std::string& path = "$");

}  // namespace cmhost::tools
