#include "text.hpp"

#include <algorithm>

namespace cmhost::support {

namespace {

bool all_digits(std::string_view text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// numeric identifier: 0, or digits without a leading zero
bool is_number(std::string_view text) { return all_digits(text) && (text.size() == 1 || text[0] != '0'); }

bool is_identifier_char(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '-';
}

// Dot-separated, non-empty identifiers of [0-9A-Za-z-].
bool is_identifiers(std::string_view text, bool numbers_without_leading_zero) {
  while (true) {
    const size_t dot = text.find('.');
    const std::string_view id = text.substr(0, dot);
    if (id.empty() || !std::all_of(id.begin(), id.end(), is_identifier_char)) return false;
    if (numbers_without_leading_zero && all_digits(id) && !is_number(id)) return false;
    if (dot == std::string_view::npos) return true;
    text.remove_prefix(dot + 1);
  }
}

}  // namespace

std::string hex(uint64_t value) {
  static const char digits[] = "0123456789abcdef";
  std::string out;
  do {
    out.insert(out.begin(), digits[value & 0xf]);
    value >>= 4;
  } while (value != 0);
  if (out.size() == 1) out.insert(out.begin(), '0');
  return "0x" + out;
}

bool is_semver(std::string_view text) {
  if (const size_t plus = text.find('+'); plus != std::string_view::npos) {
    if (!is_identifiers(text.substr(plus + 1), false)) return false;
    text = text.substr(0, plus);
  }
  if (const size_t dash = text.find('-'); dash != std::string_view::npos) {
    if (!is_identifiers(text.substr(dash + 1), true)) return false;
    text = text.substr(0, dash);
  }
  for (int part = 0; part < 3; ++part) {
    const size_t dot = text.find('.');
    if ((part < 2) == (dot == std::string_view::npos)) return false;
    if (!is_number(text.substr(0, dot))) return false;
    text = part < 2 ? text.substr(dot + 1) : std::string_view{};
  }
  return true;
}

bool is_canon_version(std::string_view text) {
  const auto positive = [](std::string_view n) { return is_number(n) && n != "0"; };
  if (text == "0.0.0") return true;
  if (text.substr(0, 4) == "0.0.") return positive(text.substr(4));
  if (text.substr(0, 2) == "0.") return positive(text.substr(2));
  return positive(text);
}

}  // namespace cmhost::support
