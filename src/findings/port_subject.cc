#include "findings/port_subject.h"

#include <fmt/core.h>

#include <algorithm>
#include <cctype>

namespace rdmacheck {

std::string PortSubject::text() const { return port_subject(device, port); }

std::string port_subject(const std::string& device, int port) {
  return fmt::format("{}/{}", device, port);
}

std::optional<PortSubject> parse_port_subject(const std::string& subject) {
  const auto slash = subject.find('/');
  if (slash == std::string::npos || slash == 0 || slash + 1 == subject.size()) return std::nullopt;
  const std::string digits = subject.substr(slash + 1);
  if (digits.size() > 3 || !std::all_of(digits.begin(), digits.end(),
                                        [](unsigned char c) { return std::isdigit(c) != 0; })) {
    return std::nullopt;
  }
  const int port = std::stoi(digits);
  if (port < 1 || port > 255) return std::nullopt;
  return PortSubject{subject.substr(0, slash), port};
}

}  // namespace rdmacheck
