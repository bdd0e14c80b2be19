// Who may read a secret (a key ring, a key file, a TLS private key): its
// owner only, as ssh insists for its keys, unless systemd handed it over as
// a credential (then systemd owns its mode and ACL).
#pragma once

#include <string>

namespace rdmacheck {

// True when FILE lies in the directory systemd handed this service its
// credentials in ($CREDENTIALS_DIRECTORY): systemd sets their mode and ACL
// (a group ACL reads as mode 0440), not the operator.
bool is_systemd_credential(const std::string& file);

// "" when FILE may hold a secret; else why not ("... is accessible by group
// or others (mode 0644): chmod 600 FILE"). A missing file is for its reader to say.
std::string secret_file_problem(const std::string& file);

}  // namespace rdmacheck
