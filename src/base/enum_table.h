// One table per enum that crosses a layer or the wire: each enum specialises
// EnumNames<E> with {value, name} pairs, and names, parsing and the lists of
// allowed values (in help texts and in the handshake's validation) all derive
// from it. A new value is one new row.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace rdmacheck {

// Specialise with: static constexpr std::array<std::pair<E, std::string_view>, N> table{...};
template <typename E>
struct EnumNames;

template <typename E>
constexpr std::string_view name_of(E e) {
  for (const auto& [value, name] : EnumNames<E>::table) {
    if (value == e) return name;
  }
  return "?";
}

template <typename E>
constexpr std::optional<E> parse_enum(std::string_view text) {
  for (const auto& [value, name] : EnumNames<E>::table) {
    if (name == text) return value;
  }
  return std::nullopt;
}

// "a | b | c": the allowed names, for help texts and error messages.
template <typename E>
std::string enum_choices(std::string_view sep = " | ") {
  std::string s;
  for (const auto& [value, name] : EnumNames<E>::table) {
    if (!s.empty()) s += sep;
    s += name;
  }
  return s;
}

}  // namespace rdmacheck
