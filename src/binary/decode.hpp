// The decoder's productions, one function per grammar rule of Binary.md that
// other files need. Each reads exactly its production or throws a Decode error.
#pragma once

#include <optional>

#include "binary/binary.hpp"
#include "reader.hpp"

namespace cmhost::binary::detail {

// decoder.cpp
Component read_component(Reader& reader);  // preamble and sections
Sort read_sort(Reader& reader);
SortIndex read_sort_index(Reader& reader);
ExternName read_name_attributes(Reader& reader);
Alias read_alias(Reader& reader);

// types.cpp
ValType read_val_type(Reader& reader);
std::optional<ValType> read_result_list(Reader& reader);  // resultlist: 0x00 t | 0x01 0x00
Type read_type(Reader& reader);
ExternType read_extern_type(Reader& reader);

// core_types.cpp
CoreValType read_core_val_type(Reader& reader);
CoreType read_core_type(Reader& reader);  // core:type of a component (or module type)

// canon.cpp
Canon read_canon(Reader& reader);

// names.cpp: nullopt when the section is malformed (it is then ignored).
std::optional<NameSection> read_name_section(Reader reader);

}  // namespace cmhost::binary::detail
