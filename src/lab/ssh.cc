#include "lab/ssh.h"

#include <fmt/core.h>

#include "base/subprocess.h"

namespace rdmacheck::lab {

namespace fs = std::filesystem;

Status make_ssh_keys(const fs::path& lab_dir) {
  const fs::path d = lab_dir / kSshDir;
  std::error_code ec;
  fs::remove_all(d, ec);
  fs::create_directories(d, ec);
  if (ec) return code_error("mkdir", ec.value(), d.string());
  for (const char* name : {"id_ed25519", "host_ed25519"}) {
    const auto out = run_capture({"ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C",
                                  std::string("rdmacheck-lab-") + name, "-f", (d / name).string()},
                                 std::chrono::seconds(30));
    if (!out) {
      return plain_error("ssh-keygen", out.error().message() + ": install 'openssh-client'");
    }
    if (out->exit_status != 0) {
      return plain_error("ssh-keygen", fmt::format("{}: exit status {}", name, out->exit_status));
    }
  }
  return ok_status();
}

std::string sshd_config() {
  return R"(# rdmacheck lab: sshd of every guest, for MPI between them (made per lab run).
Port 22
HostKey /run/lab/ssh/host_ed25519
AuthorizedKeysFile /run/lab/ssh/id_ed25519.pub
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
# The lab's files live on 9p, whose owners and modes sshd cannot vouch for.
StrictModes no
PidFile /run/sshd.pid
PrintMotd no
UseDNS no
# scp (OpenSSH 9: SFTP underneath) between guests, as on a stock host: the
# README's recipe copies a key with it.
Subsystem sftp internal-sftp
)";
}

std::string known_hosts(const std::vector<GuestPlan>& plan, const std::string& host_pub) {
  std::string names;
  for (const auto& g : plan) {
    names += (names.empty() ? "" : ",") + g.name;
    for (const auto& n : g.nics) names += "," + n.name + "," + n.address;
  }
  // host_pub: "ssh-ed25519 AAAA... comment"
  return names + " " + host_pub + (host_pub.ends_with('\n') ? "" : "\n");
}

std::string mpi_hostfile(const std::vector<GuestPlan>& plan) {
  std::string s;
  for (const auto& g : plan) s += g.name + " slots=1\n";
  return s;
}

std::string ssh_guest_script() {
  return R"SH(step ssh
mount -t tmpfs root /root && mkdir -p /root/.ssh /run/sshd && chmod 700 /root/.ssh || die "no tmpfs for /root"
cp $LAB/ssh/id_ed25519 /root/.ssh/id_ed25519 && chmod 600 /root/.ssh/id_ed25519
printf 'Host *\n  IdentityFile /root/.ssh/id_ed25519\n  UserKnownHostsFile %s\n  StrictHostKeyChecking yes\n  BatchMode yes\n' $LAB/ssh/known_hosts > /root/.ssh/config
/usr/sbin/sshd -f $LAB/ssh/sshd_config -E $D/sshd.log || die "sshd did not start: $(cat $D/sshd.log)"
)SH";
}

std::string mesh_command(int hosts, bool json) {
  return fmt::format(
      "mpirun --allow-run-as-root -np {} --hostfile /run/lab/{} --map-by ppr:1:node "
      "--mca btl tcp,self --mca pml ob1 --mca btl_tcp_if_include eth0 --mca oob_tcp_if_include "
      "eth0 /run/lab/bin/rdmacheck mesh{}",
      hosts, kHostfile, json ? " --json" : "");
}

}  // namespace rdmacheck::lab
