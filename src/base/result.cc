#include "base/result.h"

#include <cstring>

namespace rdmacheck {

std::string Error::message() const {
  std::string out = call;
  if (errnum != 0) {
    out += ": ";
    out += std::strerror(errnum);
  }
  if (!context.empty()) {
    out += errnum != 0 ? " [" : ": ";
    out += context;
    if (errnum != 0) out += "]";
  }
  return out;
}

Error errno_error(std::string call, std::string context) {
  const int e = errno;
  return Error{std::move(call), e != 0 ? e : EIO, std::move(context)};
}

Error code_error(std::string call, int code, std::string context) {
  return Error{std::move(call), code < 0 ? -code : code, std::move(context)};
}

Error plain_error(std::string call, std::string context) {
  return Error{std::move(call), 0, std::move(context)};
}

}  // namespace rdmacheck
