#include "mesh/local_server.h"

#include <fmt/core.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <future>
#include <memory>

#include "base/fd.h"
#include "serve/server.h"

namespace rdmacheck::mesh {

Result<std::string> write_key_file(const std::string& key) {
  // In $TMPDIR (else /tmp), owner-only from its creation on, as load_psk insists.
  std::error_code ec;
  std::filesystem::path dir = std::filesystem::temp_directory_path(ec);
  if (ec) dir = "/tmp";
  std::string path = (dir / "rdmacheck-mesh-key-XXXXXX").string();
  Fd fd(::mkstemp(path.data()));
  if (!fd.valid()) return errno_error("mkstemp", path);
  if (::write(fd.get(), key.data(), key.size()) != static_cast<ssize_t>(key.size())) {
    auto e = errno_error("write", path);
    ::unlink(path.c_str());
    return e;
  }
  return path;
}

Result<std::unique_ptr<LocalServer>> LocalServer::start(const std::string& key_file,
                                                        const conn::DeviceChoice& dev,
                                                        std::chrono::milliseconds session_timeout) {
  std::unique_ptr<LocalServer> s(new LocalServer());
  // Its log is not this rank's to print; the mesh reports what its probes saw.
  s->log_ = std::fopen("/dev/null", "w");
  if (s->log_ == nullptr) return errno_error("fopen", "/dev/null");
  serve::ServerOptions o;
  o.fs = FsRoot::live();
  o.tcp_port = 0;  // the kernel's pick, told back once bound
  o.dev = dev;
  auto ring = proto::KeyRingFiles::load({key_file});
  if (!ring) return ring.error();
  o.rings = std::move(*ring);
  o.session_timeout = session_timeout;
  auto listening = std::make_shared<std::promise<Result<uint16_t>>>();
  auto told = listening->get_future();
  o.on_listening = [listening](Result<uint16_t> r) { listening->set_value(std::move(r)); };
  s->thread_ = std::thread([srv = s.get(), o] {
    serve::run_server(o, srv->stop_, srv->log_);
    std::fclose(srv->log_);
    srv->log_ = nullptr;
  });
  if (told.wait_for(std::chrono::seconds(10)) != std::future_status::ready) {
    return plain_error("rdmacheck serve", "the mesh's server did not start within 10 s");
  }
  auto port = told.get();
  if (!port) return port.error();
  s->port_ = *port;
  return s;
}

LocalServer::~LocalServer() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

}  // namespace rdmacheck::mesh
