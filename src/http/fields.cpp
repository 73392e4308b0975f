// HTTP header fields for wasi:http: syntax checks, forbidden names and the
// ordered multimap behind the `fields` resource.
#include "http/fields.hpp"

#include <algorithm>
#include <iterator>

namespace cmhost::http {

std::string lowercase(std::string_view text) {
  std::string lower(text);
  // ASCII only, not std::tolower: the locale must not touch obs-text bytes.
  for (char& c : lower) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return lower;
}

namespace {

bool is_tchar(char c) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return true;
  return std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

// What a name adds to the size for each of its values.
std::size_t entry_bytes(std::string_view name, std::string_view value) { return name.size() + value.size(); }

}  // namespace

bool is_field_name(std::string_view name) { return !name.empty() && std::ranges::all_of(name, is_tchar); }

bool is_field_value(std::string_view value) {
  return std::ranges::all_of(value, [](char c) {
    auto byte = static_cast<unsigned char>(c);
    return byte == '\t' || (byte >= 0x20 && byte != 0x7f);
  });
}

ForbiddenHeaders::ForbiddenHeaders()
    : names_{"connection",       "keep-alive",        "proxy-authenticate", "proxy-authorization",
             "proxy-connection", "transfer-encoding", "upgrade",            "host",
             "http2-settings"} {}

void ForbiddenHeaders::add(std::string_view name) { names_.insert(lowercase(name)); }

bool ForbiddenHeaders::contains(std::string_view name) const { return names_.contains(lowercase(name)); }

FieldList::FieldList(std::shared_ptr<const ForbiddenHeaders> forbidden, std::size_t size_limit)
    : forbidden_(forbidden ? std::move(forbidden) : std::make_shared<const ForbiddenHeaders>()),
      size_limit_(size_limit) {}

std::variant<FieldList, FieldError> FieldList::from_list(std::vector<Entry> entries,
                                                         std::shared_ptr<const ForbiddenHeaders> forbidden,
                                                         std::size_t size_limit) {
  FieldList fields(std::move(forbidden), size_limit);
  for (auto& [name, value] : entries) {
    if (auto error = fields.append(name, std::move(value))) return *error;
  }
  return fields;
}

std::vector<std::string> FieldList::get(std::string_view name) const {
  std::vector<std::string> values;
  if (!is_field_name(name)) return values;
  std::string key = lowercase(name);
  for (const auto& [entry_name, value] : entries_) {
    if (entry_name == key) values.push_back(value);
  }
  return values;
}

bool FieldList::has(std::string_view name) const {
  if (!is_field_name(name)) return false;
  std::string key = lowercase(name);
  return std::ranges::any_of(entries_, [&](const Entry& entry) { return entry.first == key; });
}

std::optional<FieldError> FieldList::set(std::string_view name, std::vector<std::string> values) {
  if (immutable_) return FieldError::immutable;
  if (!std::ranges::all_of(values, is_field_value)) return FieldError::invalid_syntax;
  if (auto error = check_change(name)) return error;

  std::string key = lowercase(name);
  std::size_t added = 0;
  for (const auto& value : values) added += entry_bytes(key, value);
  std::size_t new_size = byte_size_ - bytes_of(key) + added;
  if (exceeds_limit(new_size)) return FieldError::size_exceeded;

  // The new values go where the first old one was (the end for a new name);
  // entries before it are of other names, so its index survives the erase.
  auto first = std::ranges::find(entries_, key, &Entry::first);
  auto position = first - entries_.begin();
  std::erase_if(entries_, [&](const Entry& entry) { return entry.first == key; });
  std::vector<Entry> replacement;
  replacement.reserve(values.size());
  for (auto& value : values) replacement.emplace_back(key, std::move(value));
  entries_.insert(entries_.begin() + position, std::make_move_iterator(replacement.begin()),
                  std::make_move_iterator(replacement.end()));
  byte_size_ = new_size;
  return std::nullopt;
}

std::optional<FieldError> FieldList::remove(std::string_view name) {
  auto removed = get_and_remove(name);
  if (auto* error = std::get_if<FieldError>(&removed)) return *error;
  return std::nullopt;
}

std::variant<std::vector<std::string>, FieldError> FieldList::get_and_remove(std::string_view name) {
  if (auto error = check_change(name)) return *error;
  std::string key = lowercase(name);
  std::vector<std::string> values;
  for (auto& [entry_name, value] : entries_) {
    if (entry_name != key) continue;
    byte_size_ -= entry_bytes(entry_name, value);
    values.push_back(std::move(value));
  }
  std::erase_if(entries_, [&](const Entry& entry) { return entry.first == key; });
  return values;
}

std::optional<FieldError> FieldList::append(std::string_view name, std::string value) {
  if (immutable_) return FieldError::immutable;
  if (!is_field_value(value)) return FieldError::invalid_syntax;
  if (auto error = check_change(name)) return error;
  std::size_t new_size = byte_size_ + entry_bytes(name, value);
  if (exceeds_limit(new_size)) return FieldError::size_exceeded;
  entries_.emplace_back(lowercase(name), std::move(value));
  byte_size_ = new_size;
  return std::nullopt;
}

void FieldList::add_from_host(std::string_view name, std::string_view value) {
  entries_.emplace_back(lowercase(name), std::string(value));
  byte_size_ += entry_bytes(name, value);
}

FieldList FieldList::mutable_copy() const {
  FieldList copy = *this;
  copy.immutable_ = false;
  return copy;
}

std::optional<FieldError> FieldList::check_change(std::string_view name) const {
  if (immutable_) return FieldError::immutable;
  if (!is_field_name(name)) return FieldError::invalid_syntax;
  if (forbidden_->contains(name)) return FieldError::forbidden;
  return std::nullopt;
}

// A change that does not grow the fields is never refused, so a guest can
// still shrink fields the host filled past the limit.
bool FieldList::exceeds_limit(std::size_t new_size) const { return new_size > size_limit_ && new_size > byte_size_; }

std::size_t FieldList::bytes_of(std::string_view lowercase_name) const {
  std::size_t bytes = 0;
  for (const auto& [name, value] : entries_) {
    if (name == lowercase_name) bytes += entry_bytes(name, value);
  }
  return bytes;
}

}  // namespace cmhost::http
