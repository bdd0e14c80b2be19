#include <fmt/core.h>

#include <fstream>

#include "lab/initramfs.h"
#include "lab/lab_run.h"
#include "lab/ssh.h"
#include "lab/vmlinux.h"
#include "proto/key_ring.h"

namespace rdmacheck::lab {

Status write_file(const fs::path& p, const std::string& text, fs::perms perms) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  if (!out) return errno_error("open", p.string());
  out << text;
  out.close();
  if (!out) return errno_error("write", p.string());
  if (perms != fs::perms::none) {
    std::error_code ec;
    fs::permissions(p, perms, ec);
  }
  return ok_status();
}

std::optional<std::string> read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) return std::nullopt;
  std::string s((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return s;
}

// Keys, sshd_config, known_hosts and the MPI hostfile (lab/ssh.h), and
// rdmacheck-mesh beside the guests' rdmacheck when it was built.
Status Lab::ssh_files(const std::vector<GuestPlan>& plan) {
  if (auto s = make_ssh_keys(dir_); !s) return s;
  const fs::path d = dir_ / kSshDir;
  auto pub = read_text(d / "host_ed25519.pub");
  if (!pub) return errno_error("open", (d / "host_ed25519.pub").string());
  if (auto s = write_file(d / "known_hosts", known_hosts(plan, *pub)); !s) return s;
  if (auto s = write_file(d / "sshd_config", sshd_config()); !s) return s;
  if (auto s = write_file(dir_ / kHostfile, mpi_hostfile(plan)); !s) return s;
  std::error_code ec;
  const fs::path mesh = fs::read_symlink("/proc/self/exe", ec).parent_path() / "rdmacheck-mesh";
  if (!ec && fs::exists(mesh)) {
    fs::copy_file(mesh, dir_ / "bin" / "rdmacheck-mesh", fs::copy_options::overwrite_existing, ec);
    if (ec) return code_error("copy", ec.value(), mesh.string());
  }
  return ok_status();
}

Status Lab::prepare(const std::vector<GuestPlan>& plan, const Kernel& k) {
  std::error_code ec;
  if (o_.workdir.empty()) {
    std::string tmpl = (fs::temp_directory_path() / "rdmacheck-lab-XXXXXX").string();
    if (::mkdtemp(tmpl.data()) == nullptr) return errno_error("mkdtemp", tmpl);
    dir_ = tmpl;
    made_dir_ = true;
  } else {
    dir_ = fs::absolute(o_.workdir);
    fs::create_directories(dir_, ec);
    if (ec) return code_error("mkdir", ec.value(), dir_.string());
  }
  fs::create_directories(dir_ / "bin", ec);
  // The guests run this very binary, copied so it is reachable whatever its path.
  fs::copy_file("/proc/self/exe", dir_ / "bin" / "rdmacheck", fs::copy_options::overwrite_existing,
                ec);
  if (ec) return code_error("copy", ec.value(), "/proc/self/exe");
  if (auto s = write_initramfs((dir_ / "initrd.cpio").string(), k, "/bin/busybox"); !s) return s;
  boot_image_ = k.image;
  auto image = FsRoot::live().read(k.image);
  if (!image) return image.error();
  if (auto vmlinux = unpack_vmlinux(*image); !vmlinux) {
    std::fprintf(out_, "lab: booting the compressed %s (slower under TCG): %s\n", k.image.c_str(),
                 vmlinux.error().message().c_str());
  } else {
    if (auto s = write_file(dir_ / "vmlinux", *vmlinux); !s) return s;
    boot_image_ = (dir_ / "vmlinux").string();
  }
  if (auto s = write_file(dir_ / "hosts", hosts_file(plan)); !s) return s;
  if (std::any_of(plan.begin(), plan.end(), [](const GuestPlan& g) { return g.ssh; })) {
    if (auto s = ssh_files(plan); !s) return s;
  }
  // A fresh key per boot (a one-line ring: TLS 1.3, identity "lab"), owner-only.
  if (auto s = write_file(dir_ / kLabKeyFile, "", fs::perms::owner_read | fs::perms::owner_write);
      !s) {
    return s;
  }
  if (auto s = write_file(dir_ / kLabKeyFile, proto::ring_line("lab", proto::fresh_key())); !s)
    return s;
  for (const auto& g : plan) {
    const fs::path gd = dir_ / g.name;
    fs::remove_all(gd, ec);
    fs::create_directories(gd, ec);
    if (ec) return code_error("mkdir", ec.value(), gd.string());
    if (auto s = write_file(gd / "init.sh", guest_script(g, plan), fs::perms::owner_all); !s)
      return s;
    for (size_t i = 0; i < g.setup.size(); ++i) {
      if (auto s = write_file(gd / fmt::format("setup.{}.sh", i + 1), g.setup[i] + "\n"); !s)
        return s;
    }
    for (size_t i = 0; i < g.run.size(); ++i) {
      if (auto s = write_file(gd / fmt::format("run.{}.sh", i + 1), g.run[i] + "\n"); !s) return s;
    }
  }
  return ok_status();
}

}  // namespace rdmacheck::lab
