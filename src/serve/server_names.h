// The names a server answers to (serve --server-name): a client's TLS SNI
// is the name it dialled, so a connection relayed from another server of the
// fleet (the client dialled that one) names another host and is refused.
#pragma once

#include <string>
#include <vector>

namespace rdmacheck::serve {

// Whether a client that dialled DIALLED reached this server: one of NAMES
// (case-insensitive, a trailing dot ignored), or one of this machine's own
// addresses as a literal (IPv6 with or without brackets).
bool answers_to(const std::vector<std::string>& names, const std::string& dialled);

}  // namespace rdmacheck::serve
