#include "mesh/local_server.h"

#include <fmt/core.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <future>

#include "net/tcp.h"
#include "serve/server.h"

namespace rdmacheck::mesh {

namespace {

// A port nobody listens on now: the kernel's pick for an ephemeral bind.
Result<uint16_t> free_port() {
  auto l = tcp_listen("", 0);
  if (!l) return l.error();
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  if (::getsockname(l->get(), reinterpret_cast<sockaddr*>(&ss), &len) != 0) {
    return errno_error("getsockname", "the mesh's server port");
  }
  if (ss.ss_family == AF_INET6) return ntohs(reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port);
  return ntohs(reinterpret_cast<sockaddr_in*>(&ss)->sin_port);
}

}  // namespace

Result<std::string> write_key_file(const std::string& key) {
  char path[] = "/tmp/rdmacheck-mesh-key-XXXXXX";
  const int fd = ::mkstemp(path);  // owner-only, as load_psk insists
  if (fd < 0) return errno_error("mkstemp", path);
  const bool ok = ::write(fd, key.data(), key.size()) == static_cast<ssize_t>(key.size());
  ::close(fd);
  if (!ok) {
    ::unlink(path);
    return errno_error("write", path);
  }
  return std::string(path);
}

Result<std::unique_ptr<LocalServer>> LocalServer::start(const proto::Psk& key,
                                                        const conn::DeviceChoice& dev,
                                                        std::chrono::milliseconds session_timeout) {
  auto port = free_port();
  if (!port) return port.error();
  std::unique_ptr<LocalServer> s(new LocalServer());
  s->port_ = *port;
  // The server says "listening" on its log once bound, or why not: a pipe
  // carries that line here; the rest of its log is drained and dropped.
  int fds[2];
  if (::pipe(fds) != 0) return errno_error("pipe", "the mesh's server log");
  s->log_ = ::fdopen(fds[1], "w");
  std::FILE* in = ::fdopen(fds[0], "r");
  if (!s->log_ || !in) return errno_error("fdopen", "the mesh's server log");
  std::setvbuf(s->log_, nullptr, _IOLBF, 0);
  serve::ServerOptions o;
  o.fs = FsRoot::live();
  o.tcp_port = *port;
  o.dev = dev;
  o.keys = {key};
  o.session_timeout = session_timeout;
  std::promise<std::string> first;  // the line that says listening, or the last one before exit
  auto said = first.get_future();
  std::thread([in, p = std::move(first)]() mutable {
    char line[1024];
    bool told = false;
    std::string last;
    while (std::fgets(line, sizeof line, in)) {
      last = line;
      if (!told && last.find("listening") != std::string::npos) {
        p.set_value(last);
        told = true;
      }
    }
    if (!told) p.set_value(last.empty() ? "the server stopped without a word" : last);
    std::fclose(in);
  }).detach();
  s->thread_ = std::thread([srv = s.get(), o] {
    serve::run_server(o, srv->stop_, srv->log_);
    std::fclose(srv->log_);  // ends the reader
    srv->log_ = nullptr;
  });
  if (said.wait_for(std::chrono::seconds(10)) != std::future_status::ready) {
    return plain_error("rdmacheck serve", "the mesh's server did not start within 10 s");
  }
  auto line = said.get();
  if (line.find("listening") == std::string::npos) return plain_error("rdmacheck serve", line);
  return s;
}

LocalServer::~LocalServer() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

}  // namespace rdmacheck::mesh
