// Strings between encodings: reading a string out of guest memory with the
// lift checks, and storing a string from any source encoding into guest
// memory with the realloc sequence definitions.py prescribes for that pair
// of encodings (store_string_into_range). The host's UTF-8 strings and
// strings copied between components both go through here.
#pragma once

#include <cstdint>

#include "cmhost/abi/canon.hpp"

namespace cmhost::abi::detail {

enum class TextForm : uint8_t { Utf8, Utf16, Latin1 };

// A well-formed string in some memory: `code_units` units of `form` at `data`.
struct StringSource {
  const uint8_t* data;
  uint64_t code_units;
  TextForm form;
  // The source options' encoding was latin1+utf16 (changes which store
  // algorithm the spec picks for a latin1+utf16 destination).
  bool dynamic_latin1_utf16;
};

struct StoredString {
  uint64_t ptr;
  uint64_t tagged_code_units;  // with the UTF-16 tag for latin1+utf16 memories
};

// Checks the (ptr, tagged code units) pair of cx's encoding as lifting does
// (length limit, alignment, bounds, well-formedness) and returns the source.
// The data pointer is valid until cx's memory moves.
StringSource read_string(const AbiContext& cx, uint64_t ptr, uint64_t tagged_code_units,
                         const Type& type);

// Allocates with cx's realloc and writes `src` in cx's encoding. `src.data`
// must not live in cx's memory (realloc may move it).
StoredString store_string(AbiContext& cx, const StringSource& src, const Type& type);

}  // namespace cmhost::abi::detail
