// The monitor's /metrics endpoint: a small HTTP/1.1 server on the project's
// own TCP code, chosen over a general HTTP library for the one thing it has
// to do safely. One thread polls the listener and every connection; each
// connection has one deadline for its whole request and response, so an idle
// or slow-loris client costs a slot for at most that long; when every slot
// is taken the oldest connection makes room for the new one, so a scrape
// always gets in; a request over 8 KiB or not HTTP is answered 400 and
// closed. Every response closes its connection (Prometheus scrapes once per
// interval; nothing to keep alive).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "base/fd.h"
#include "base/result.h"

namespace rdmacheck::monitor {

struct HttpOptions {
  std::chrono::milliseconds request_timeout{2000};  // accept to the last byte of the response
  size_t max_connections = 64;
  size_t max_request_bytes = 8192;
};

struct HttpStats {
  uint64_t served = 0;     // 200 responses
  uint64_t rejected = 0;   // 400, 404, 405
  uint64_t timed_out = 0;  // closed at their deadline
  uint64_t evicted = 0;    // closed to make room for a newer connection
};

class MetricsServer {
 public:
  // What GET /metrics answers (the registry's exposition).
  using Body = std::function<std::string()>;
  // Listens on ADDR:PORT (port 0: any; port() tells which).
  static Result<std::unique_ptr<MetricsServer>> start(const std::string& addr, uint16_t port,
                                                      Body body, HttpOptions o = {});
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;
  ~MetricsServer();  // stop()

  [[nodiscard]] uint16_t port() const { return port_; }
  // Ends the loop and closes every connection; returns within about 100 ms.
  void stop();
  [[nodiscard]] HttpStats stats() const;

 private:
  MetricsServer() = default;
  void loop();

  Fd listener_;
  Fd wake_read_;
  Fd wake_write_;
  uint16_t port_ = 0;
  Body body_;
  HttpOptions o_;
  std::atomic<uint64_t> served_{0};
  std::atomic<uint64_t> rejected_{0};
  std::atomic<uint64_t> timed_out_{0};
  std::atomic<uint64_t> evicted_{0};
  std::thread thread_;
};

// The response to one request's bytes (request line and headers, up to the
// blank line), and whether it was served (200). Pure: the tests and the
// loop share it.
struct HttpReply {
  std::string bytes;
  int status = 0;
};
HttpReply http_reply(const std::string& request, const MetricsServer::Body& body);

}  // namespace rdmacheck::monitor
