// The server's one rdma_cm listener (for clients that connect with --cm).
// A session announces a random token in its welcome; the client puts it in
// the connect request's private data; the acceptor hands the request's id to
// the session that waits for that token. Unknown tokens are rejected, and so
// is a request whose source address is not the control connection's: a token
// binds the QP to the host the session talks to over TCP, as the hello's GID
// does without rdma_cm (serve/reflection.h).
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

  // A new token whose request will be kept for wait() when it comes from
  // PEER (the control connection's client address).
  uint64_t expect(const Ip16& peer);
  void cancel(uint64_t token);  // a token no wait() will come for (the client left)
  // The request carrying TOKEN; ends early (ECANCELED) when abort_fd becomes
  // readable (the client gave up and said so), and with EACCES when the
  // token came from another address than the one expect() was given.
  // Forgets the token either way.
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
  struct Pending {
    Ip16 peer{};          // the control connection's client
    verbs::CmIdPtr id;    // the request, once it arrived from PEER
    std::string refused;  // why a request carrying the token was rejected
  };
  std::map<uint64_t, Pending> pending_;  // token -> what came for it
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace rdmacheck::serve
