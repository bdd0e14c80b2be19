// Errors as values: every fallible call returns Result<T>, which holds either
// the value or an Error naming the failing call, its errno and its context.
#pragma once

#include <cerrno>
#include <string>
#include <utility>
#include <variant>

namespace rdmacheck {

struct Error {
  std::string call;     // the failing call, e.g. "ibv_modify_qp(RTR)"
  int errnum = 0;       // errno value, 0 when the failure has none
  std::string context;  // what it was operating on, e.g. "rxe0 port 1 qpn 0x11"

  // "ibv_modify_qp(RTR): Invalid argument [rxe0 port 1 qpn 0x11]"
  [[nodiscard]] std::string message() const;
};

// Builds an Error from the current errno (for calls that return NULL or -1).
Error errno_error(std::string call, std::string context = {});
// Builds an Error from a returned error code (verbs calls that return the errno itself).
Error code_error(std::string call, int code, std::string context = {});
// A failure that is not a system call: a parse error, a protocol violation.
Error plain_error(std::string call, std::string context);

// E is Error, or a richer failure type where the caller decides by more than
// the call (conn::SessionFailure carries the stage that failed).
template <typename T, typename E = Error>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}  // NOLINT(google-explicit-constructor)
  Result(E error) : v_(std::move(error)) {}  // NOLINT(google-explicit-constructor)

  [[nodiscard]] bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }
  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  [[nodiscard]] const E& error() const& { return std::get<1>(v_); }
  E& error() & { return std::get<1>(v_); }

 private:
  std::variant<T, E> v_;
};

struct Unit {};
using Status = Result<Unit>;
inline Status ok_status() { return Unit{}; }

}  // namespace rdmacheck
