// HTTP header fields as wasi:http's `fields` resource sees them: name and
// value syntax, the names a guest may not set, and the ordered multimap that
// backs request, response and trailer fields.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace cmhost::http {

// Lowercase ASCII copy; other bytes are kept as they are. Field names are
// case-insensitive and cmhost keeps them lowercase, as the `http` crate that
// wasmtime uses does.
std::string lowercase(std::string_view text);

// An RFC 9110 token: non-empty, only tchar ("!#$%&'*+-.^_`|~", digits, letters).
bool is_field_name(std::string_view name);

// A field value as the `http` crate's HeaderValue::from_bytes accepts it:
// every byte >= 0x20 except DEL (0x7f), or HTAB. obs-text (>= 0x80) and the
// empty value are allowed.
bool is_field_value(std::string_view value);

// The names a guest may not set: wasmtime's DEFAULT_FORBIDDEN_HEADERS, plus
// any an embedder adds (cmhost serve --forbid-header NAME).
class ForbiddenHeaders {
 public:
  ForbiddenHeaders();  // the default set
  void add(std::string_view name);  // any case
  bool contains(std::string_view name) const;  // any case

 private:
  std::set<std::string, std::less<>> names_;  // lowercase
};

enum class FieldError { invalid_syntax, forbidden, immutable, size_exceeded };

// wasi:http's fields: an ordered multimap of lowercase names to values (bytes,
// held in std::string). entries() (copy-all) gives the entries in the order
// they were added; set() replaces a name's values where its first one was.
//
// Guest changes are checked in the order: immutable, invalid_syntax,
// forbidden, size_exceeded; a refused change changes nothing. The size is the
// sum of name and value bytes of all entries; a change that would take it past
// the limit (and grow it) is refused.
//
// Copying keeps the immutable flag (a copy of a request's headers is still
// the request's); mutable_copy() is the wasi:http `clone`.
class FieldList {
 public:
  using Entry = std::pair<std::string, std::string>;  // lowercase name, value bytes

  // wasmtime's DEFAULT_FIELD_SIZE_LIMIT.
  static constexpr std::size_t default_size_limit = 128 * 1024;

  // A null `forbidden` stands for the default set.
  explicit FieldList(std::shared_ptr<const ForbiddenHeaders> forbidden,
                     std::size_t size_limit = default_size_limit);

  // fields.from-list: the first failing entry decides the error (each entry
  // checked as append() checks it); nothing is kept on failure.
  static std::variant<FieldList, FieldError> from_list(std::vector<Entry> entries,
                                                       std::shared_ptr<const ForbiddenHeaders> forbidden,
                                                       std::size_t size_limit = default_size_limit);

  // fields.get: every value of `name` (any case), in order; empty when there
  // is none or the name is not a valid field name.
  std::vector<std::string> get(std::string_view name) const;
  bool has(std::string_view name) const;  // false for an invalid name

  // fields.set: replaces all values of `name`; an empty list removes it.
  std::optional<FieldError> set(std::string_view name, std::vector<std::string> values);
  // fields.delete: immutable, invalid_syntax, forbidden.
  std::optional<FieldError> remove(std::string_view name);
  // fields.get-and-delete: the removed values, after the checks of remove().
  std::variant<std::vector<std::string>, FieldError> get_and_remove(std::string_view name);
  // fields.append: immutable, invalid_syntax, forbidden, size_exceeded.
  std::optional<FieldError> append(std::string_view name, std::string value);

  const std::vector<Entry>& entries() const { return entries_; }  // fields.copy-all

  // A field off the wire (already parsed by Boost.Beast) or one the host sets
  // itself: the name is lowercased, nothing is checked (not even the limit,
  // which the parser enforced), but its bytes count toward the size.
  void add_from_host(std::string_view name, std::string_view value);

  void make_immutable() { immutable_ = true; }
  bool immutable() const { return immutable_; }
  // A mutable copy with the same entries, forbidden names and limit.
  FieldList mutable_copy() const;

  std::size_t byte_size() const { return byte_size_; }  // sum of name and value bytes
  std::size_t size_limit() const { return size_limit_; }
  const std::shared_ptr<const ForbiddenHeaders>& forbidden() const { return forbidden_; }

 private:
  // The guest-change checks other than size; `name` in any case.
  std::optional<FieldError> check_change(std::string_view name) const;
  // Whether going from byte_size_ to `new_size` is refused.
  bool exceeds_limit(std::size_t new_size) const;
  std::size_t bytes_of(std::string_view lowercase_name) const;

  std::shared_ptr<const ForbiddenHeaders> forbidden_;
  std::size_t size_limit_;
  std::vector<Entry> entries_;
  std::size_t byte_size_ = 0;
  bool immutable_ = false;
};

}  // namespace cmhost::http
