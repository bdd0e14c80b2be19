// The validator the decoders of proto/messages.cc read with (#23 split it
// out): one JSON object's fields, type- and size-checked, the first problem
// remembered so a parser reads straight through and checks once at the end.
// Internal to proto/: only messages.cc includes it.
#pragma once

#include <fmt/core.h>

#include <cmath>
#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "base/result.h"

namespace rdmacheck::proto::detail {

using nlohmann::json;

constexpr size_t kMaxString = 256;
constexpr size_t kMaxSteps = 32;
constexpr size_t kMaxErrors = 64;

class Fields {
 public:
  // CALL names the message family in errors ("handshake", "doctor-report").
  Fields(const json& j, std::string where, const char* call = "handshake")
      : j_(j), where_(std::move(where)), call_(call) {
    if (!j_.is_object()) fail("", "not an object");
  }

  template <typename Int>
  Int integer(const char* key, uint64_t lo, uint64_t hi) {
    const json* v = find(key);
    if (v == nullptr) return 0;
    // Parsed text gives non-negative integers as unsigned; built in memory, as signed.
    const bool integral =
        v->is_number_unsigned() || (v->is_number_integer() && v->get<int64_t>() >= 0);
    if (!integral || v->get<uint64_t>() < lo || v->get<uint64_t>() > hi) {
      fail(key, fmt::format("must be an integer in {}..{}", lo, hi));
      return 0;
    }
    return static_cast<Int>(v->get<uint64_t>());
  }

  double number(const char* key, double lo, double hi) {
    const json* v = find(key);
    if (v == nullptr) return 0;
    if (!v->is_number() || !std::isfinite(v->get<double>()) || v->get<double>() < lo ||
        v->get<double>() > hi) {
      fail(key, fmt::format("must be a number in {}..{}", lo, hi));
      return 0;
    }
    return v->get<double>();
  }

  std::string text(const char* key, bool required = true, size_t max = kMaxString) {
    const json* v = find(key, required);
    if (v == nullptr) return {};
    return checked_text(key, *v, max);
  }

  // An array of at most MAX_COUNT strings of at most MAX_LEN characters each.
  std::vector<std::string> texts(const char* key, size_t max_count, size_t max_len) {
    std::vector<std::string> out;
    const json* a = array(key, max_count);
    if (a == nullptr) return out;
    for (const auto& v : *a) {
      std::string t = checked_text(key, v, max_len);
      if (error_) return {};
      out.push_back(std::move(t));
    }
    return out;
  }

  // A text from a fixed list (QP and CM step names, which stay text on the wire).
  std::string text_in(const char* key, std::initializer_list<const char*> allowed) {
    std::string s = text(key);
    if (!error_) {
      for (const char* a : allowed) {
        if (s == a) return s;
      }
      fail(key, fmt::format("unknown value '{}'", s));
    }
    return {};
  }

  // A name from E's table (base/enum_table.h).
  template <typename E>
  E one_of(const char* key, E fallback) {
    std::string s = text(key);
    if (error_) return fallback;
    if (auto v = parse_enum<E>(s)) return *v;
    fail(key, fmt::format("unknown value '{}' (one of {})", s, enum_choices<E>(", ")));
    return fallback;
  }

  std::string gid(const char* key) {
    std::string s = text(key);
    if (!error_ && !valid_gid_text(s)) fail(key, "must be a GID (8 groups of 4 hex digits)");
    return s;
  }

  bool flag(const char* key) {
    const json* v = find(key);
    if (v != nullptr && !v->is_boolean()) {
      fail(key, "must be true or false");
      return false;
    }
    return v != nullptr && v->get<bool>();
  }

  const json* object(const char* key) {
    const json* v = find(key);
    if (v != nullptr && !v->is_object()) {
      fail(key, "must be an object");
      return nullptr;
    }
    return v;
  }

  const json* array(const char* key, size_t max) {
    const json* v = find(key);
    if (v != nullptr && (!v->is_array() || v->size() > max)) {
      fail(key, fmt::format("must be an array of at most {} entries", max));
      return nullptr;
    }
    return v;
  }

  void merge(const std::optional<Error>& e) {
    if (e && !error_) error_ = e;
  }
  void merge(const Error& e) {
    if (!error_) error_ = e;
  }
  [[nodiscard]] const std::optional<Error>& error() const { return error_; }

 private:
  const json* find(const char* key, bool required = true) {
    if (error_) return nullptr;
    auto it = j_.find(key);
    if (it == j_.end()) {
      if (required) fail(key, "missing");
      return nullptr;
    }
    return &*it;
  }
  std::string checked_text(const char* key, const json& v, size_t max) {
    if (!v.is_string() || v.get_ref<const std::string&>().size() > max) {
      fail(key, fmt::format("must be a string of at most {} characters", max));
      return {};
    }
    for (unsigned char c : v.get_ref<const std::string&>()) {
      if (std::iscntrl(c) != 0) {
        fail(key, "must not contain control characters");
        return {};
      }
    }
    return v.get<std::string>();
  }
  void fail(const std::string& key, const std::string& why) {
    if (!error_) {
      error_ =
          plain_error(call_, fmt::format("{}{}{}: {}", where_, key.empty() ? "" : ".", key, why));
    }
  }

  const json& j_;
  std::string where_;
  const char* call_;
  std::optional<Error> error_;
};

}  // namespace rdmacheck::proto::detail
