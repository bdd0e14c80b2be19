// The server's one rdma_cm listener (for clients that connect with --cm).
// A session announces a random token in its welcome; the client puts it in
// the connect request's private data; the acceptor hands the request's id to
// the session that waits for that token. Unknown tokens are rejected.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "base/deadline.h"
#include "base/fd.h"
#include "base/result.h"
#include "net/ip_match.h"
#include "verbs/cm.h"

namespace rdmacheck::serve {

class CmAcceptor {
 public:
  // Listens on BIND (all IPv4 addresses when empty) and PORT in rdma_cm's own
  // port space (separate from TCP's, so it can share the server's number).
  // Requests from outside ALLOW (when not empty) are rejected, with a LOG line.
  static Result<std::unique_ptr<CmAcceptor>> start(const std::string& bind, uint16_t port,
                                                   std::vector<Cidr> allow,
                                                   std::function<void(const std::string&)> log);
  CmAcceptor(const CmAcceptor&) = delete;
  CmAcceptor& operator=(const CmAcceptor&) = delete;
  ~CmAcceptor();

  uint64_t expect();            // a new token whose request will be kept for wait()
  void cancel(uint64_t token);  // a token no wait() will come for (the client left)
  // The request carrying TOKEN; ends early (ECANCELED) when abort_fd becomes
  // readable (the client gave up and said so). Forgets the token either way.
  Result<verbs::CmIdPtr> wait(uint64_t token, Deadline d, int abort_fd = -1);

 private:
  CmAcceptor() = default;
  void loop();
  bool admits(rdma_cm_id* id) const;
  std::vector<Cidr> allow_;
  std::function<void(const std::string&)> log_;
  verbs::CmChannelPtr channel_;
  verbs::CmIdPtr listener_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<uint64_t, verbs::CmIdPtr> pending_;  // token -> request (empty until it arrives)
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace rdmacheck::serve
