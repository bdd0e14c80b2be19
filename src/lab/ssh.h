// The lab's ssh between guests, for MPI (`rdmacheck lab --mesh` / `--ssh`):
// a key pair and a host key made for each lab run in the lab's directory,
// the host key pinned in a known_hosts of every guest name, a dedicated
// sshd_config; nothing from the host's ~/.ssh or /etc/ssh. Pure text here
// but make_ssh_keys, which runs ssh-keygen.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "base/result.h"
#include "lab/plan.h"

namespace rdmacheck::lab {

// In the lab directory (the guests see it as /run/lab).
constexpr const char* kSshDir = "ssh";
constexpr const char* kHostfile = "hostfile";

// id_ed25519 (root's key), host_ed25519 (every guest's host key), both with .pub.
Status make_ssh_keys(const std::filesystem::path& lab_dir);

std::string sshd_config();
// Every name and address of every guest, with the one host key.
std::string known_hosts(const std::vector<GuestPlan>& plan, const std::string& host_pub);
// Open MPI's hostfile: one slot per guest.
std::string mpi_hostfile(const std::vector<GuestPlan>& plan);
// What a guest runs before it says ready: root's ssh files on a tmpfs /root, and sshd.
std::string ssh_guest_script();
// The mesh over every guest, from h1: Open MPI over TCP on the lab's first wire.
std::string mesh_command(int hosts, bool json);

}  // namespace rdmacheck::lab
