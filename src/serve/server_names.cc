#include "serve/server_names.h"

#include <arpa/inet.h>

#include <algorithm>
#include <cctype>
#include <cstring>

#include "doctor/netaddr.h"

namespace rdmacheck::serve {

bool answers_to(const std::vector<std::string>& names, const std::string& dialled) {
  auto same = [](const std::string& a, const std::string& b) {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
             return std::tolower(static_cast<unsigned char>(x)) ==
                    std::tolower(static_cast<unsigned char>(y));
           });
  };
  std::string name = dialled;
  if (!name.empty() && name.back() == '.') name.pop_back();  // "h1.example." is "h1.example"
  if (name.empty()) return false;
  if (std::any_of(names.begin(), names.end(), [&](const auto& n) { return same(n, name); })) {
    return true;
  }
  // One of this machine's own addresses, dialled as a literal.
  if (name.size() > 2 && name.front() == '[' && name.back() == ']') {
    name = name.substr(1, name.size() - 2);
  }
  in6_addr want{};
  in_addr want4{};
  const bool v6 = ::inet_pton(AF_INET6, name.c_str(), &want) == 1;
  if (!v6 && ::inet_pton(AF_INET, name.c_str(), &want4) != 1) return false;
  auto mine = doctor::read_addresses();
  if (!mine) return false;
  return std::any_of(mine->begin(), mine->end(), [&](const doctor::NetAddress& a) {
    in6_addr have{};
    in_addr have4{};
    if (v6)
      return ::inet_pton(AF_INET6, a.address.c_str(), &have) == 1 &&
             std::memcmp(&have, &want, sizeof have) == 0;
    return ::inet_pton(AF_INET, a.address.c_str(), &have4) == 1 && have4.s_addr == want4.s_addr;
  });
}

}  // namespace rdmacheck::serve
