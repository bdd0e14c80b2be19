#include "net/tls.h"

#include <arpa/inet.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <sys/socket.h>

#include <array>
#include <cerrno>
#include <cstring>

#include "net/tls_fault.h"
#include "net/tls_state.h"

namespace rdmacheck {
namespace {

using detail::check_server_name;
using detail::find_session;
using detail::openssl_errors;
using detail::TlsState;
using detail::use_session;

Result<Unit, TlsError> wait_for(int fd, short events, Deadline d, const char* what) {
  pollfd p{fd, events, 0};
  for (;;) {
    const int left = ms_left(d);
    if (left == 0) return TlsError{TlsFault::kTimedOut, code_error(what, ETIMEDOUT)};
    const int r = ::poll(&p, 1, left);
    if (r > 0) return Unit{};
    if (r < 0 && errno != EINTR) return TlsError{TlsFault::kIo, errno_error(what)};
  }
}

// Sends everything OpenSSL has written for the peer.
Result<Unit, TlsError> flush(TlsState& st, Deadline d) {
  std::array<char, 16384> buf{};
  while (BIO_ctrl_pending(st.out) > 0) {
    const int n = BIO_read(st.out, buf.data(), static_cast<int>(buf.size()));
    if (n <= 0) break;
    size_t done = 0;
    while (done < static_cast<size_t>(n)) {
      const ssize_t w = ::send(st.fd, buf.data() + done, static_cast<size_t>(n) - done,
                               MSG_NOSIGNAL | MSG_DONTWAIT);
      if (w > 0) {
        done += static_cast<size_t>(w);
        continue;
      }
      if (w < 0 && errno == EINTR) continue;
      if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        if (auto s = wait_for(st.fd, POLLOUT, d, "send"); !s) return s;
        continue;
      }
      const int e = errno;
      return TlsError{e == EPIPE || e == ECONNRESET ? TlsFault::kClosed : TlsFault::kIo,
                      code_error("send", e, "the TLS peer")};
    }
  }
  return Unit{};
}

// Reads what the peer has sent (at least one byte) into OpenSSL's buffer.
Result<Unit, TlsError> fill(TlsState& st, Deadline d) {
  std::array<char, 16384> buf{};
  for (;;) {
    const ssize_t n = ::recv(st.fd, buf.data(), buf.size(), MSG_DONTWAIT);
    if (n > 0) {
      st.heard = true;
      BIO_write(st.in, buf.data(), static_cast<int>(n));
      return Unit{};
    }
    if (n == 0) {
      return TlsError{TlsFault::kClosed,
                      code_error("recv", ECONNRESET, "the peer closed the connection")};
    }
    if (errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) {
      const int e = errno;
      return TlsError{e == ECONNRESET ? TlsFault::kClosed : TlsFault::kIo, code_error("recv", e)};
    }
    if (auto s = wait_for(st.fd, POLLIN, d, "recv"); !s) return s;
  }
}

// What a failed OpenSSL call means, from its error queue and what this side saw.
TlsError classify(TlsState& st, const char* what) {
  detail::TlsFailureFacts f;
  f.reason = ERR_GET_REASON(ERR_peek_error());
  f.errno_set = errno != 0;
  f.detail = openssl_errors();
  f.handshake = SSL_is_init_finished(st.ssl.get()) == 0;
  f.server = st.server;
  f.unknown_identity = st.unknown_identity;
  f.wrong_name = st.wrong_name;
  f.heard = st.heard;
  f.identity = st.identity;
  f.own_identity = st.key.identity;
  f.certificates = st.certs != nullptr;
  f.verify = SSL_get_verify_result(st.ssl.get());
  f.server_name = st.sni;
  return detail::classify_tls_failure(f, what);
}

// Runs OP (an SSL_* call) until it succeeds, moving bytes between the socket
// and OpenSSL's buffers; returns OP's positive result.
template <typename Op>
Result<int, TlsError> drive(TlsState& st, Op op, Deadline d, const char* what) {
  for (;;) {
    ERR_clear_error();
    errno = 0;
    const int r = op();
    auto sent = flush(st, d);  // OpenSSL's output, alerts included
    if (r > 0) {
      if (!sent) return sent.error();
      return r;
    }
    const int e = SSL_get_error(st.ssl.get(), r);
    if (e == SSL_ERROR_WANT_READ) {
      if (!sent) return sent.error();
      if (auto got = fill(st, d); !got) return got.error();
      continue;
    }
    if (e == SSL_ERROR_WANT_WRITE) continue;  // memory buffers: flushed above
    if (e == SSL_ERROR_ZERO_RETURN) {
      return TlsError{TlsFault::kClosed, plain_error(what, "the peer closed the TLS session")};
    }
    return classify(st, what);
  }
}

// A connection's state: with CERTS their shared context, else one of its
// own for pre-shared keys.
Result<std::unique_ptr<TlsState>, TlsError> new_state(const Fd& fd, bool server,
                                                      TlsCerts certs = nullptr) {
  auto st = std::make_unique<TlsState>();
  st->fd = fd.get();
  st->server = server;
  st->certs = std::move(certs);
  auto fail = [](const char* call) {
    return TlsError{TlsFault::kProtocol, plain_error(call, openssl_errors())};
  };
  SSL_CTX* ctx = st->certs ? static_cast<SSL_CTX*>(st->certs->ctx()) : nullptr;
  if (ctx == nullptr) {
    st->ctx.reset(SSL_CTX_new(server ? TLS_server_method() : TLS_client_method()));
    if (!st->ctx) return fail("SSL_CTX_new");
    ctx = st->ctx.get();
    if (!detail::restrict_to_tls13(ctx)) return fail("SSL_CTX_set_ciphersuites");
    if (server) {
      SSL_CTX_set_num_tickets(ctx, 0);  // nothing to resume: each connection proves its key
      SSL_CTX_set_psk_find_session_callback(ctx, find_session);
      SSL_CTX_set_tlsext_servername_callback(ctx, check_server_name);
    } else {
      SSL_CTX_set_psk_use_session_callback(ctx, use_session);
    }
  }
  st->ssl.reset(SSL_new(ctx));
  if (!st->ssl) return fail("SSL_new");
  st->in = BIO_new(BIO_s_mem());
  st->out = BIO_new(BIO_s_mem());
  if (st->in == nullptr || st->out == nullptr) {
    BIO_free(st->in);
    BIO_free(st->out);
    return fail("BIO_new");
  }
  SSL_set_bio(st->ssl.get(), st->in, st->out);
  SSL_set_app_data(st->ssl.get(), st.get());
  return st;
}

}  // namespace

TlsChannel::TlsChannel(std::unique_ptr<detail::TlsState> s) : s_(std::move(s)) {}
TlsChannel::TlsChannel(TlsChannel&&) noexcept = default;
TlsChannel& TlsChannel::operator=(TlsChannel&&) noexcept = default;
TlsChannel::~TlsChannel() = default;

namespace {

// The client's handshake on ST, sending SERVER_NAME as SNI.
Result<std::unique_ptr<TlsState>, TlsError> client_handshake(std::unique_ptr<TlsState> st,
                                                             const std::string& server_name,
                                                             Deadline d) {
  SSL* ssl = st->ssl.get();
  st->sni = server_name;
  if (!server_name.empty() && SSL_set_tlsext_host_name(ssl, server_name.c_str()) != 1) {
    return TlsError{TlsFault::kProtocol, plain_error("SNI", openssl_errors())};
  }
  if (st->certs && !detail::expect_server_name(ssl, server_name)) {
    return TlsError{TlsFault::kProtocol, plain_error("server name", openssl_errors())};
  }
  SSL_set_connect_state(ssl);
  if (auto r = drive(
          *st, [ssl] { return SSL_do_handshake(ssl); }, d, "TLS handshake");
      !r) {
    return r.error();
  }
  if (st->certs) st->identity = detail::peer_common_name(ssl);
  return st;
}

// The server's handshake on ST.
Result<std::unique_ptr<TlsState>, TlsError> server_handshake(std::unique_ptr<TlsState> st,
                                                             Deadline d) {
  SSL* ssl = st->ssl.get();
  SSL_set_accept_state(ssl);
  if (auto r = drive(
          *st, [ssl] { return SSL_do_handshake(ssl); }, d, "TLS handshake");
      !r) {
    return r.error();
  }
  if (const char* name = SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name)) st->sni = name;
  if (st->certs) st->identity = detail::peer_common_name(ssl);
  return st;
}

}  // namespace

Result<TlsChannel, TlsError> TlsChannel::connect(const Fd& fd, const TlsKey& key,
                                                 const std::string& server_name, Deadline d) {
  auto st = new_state(fd, false);
  if (!st) return st.error();
  (*st)->key = key;
  (*st)->identity = key.identity;
  auto done = client_handshake(std::move(*st), server_name, d);
  if (!done) return done.error();
  return TlsChannel(std::move(*done));
}

Result<TlsChannel, TlsError> TlsChannel::connect(const Fd& fd, const TlsCerts& certs,
                                                 const std::string& server_name, Deadline d) {
  auto st = new_state(fd, false, certs);
  if (!st) return st.error();
  auto done = client_handshake(std::move(*st), server_name, d);
  if (!done) return done.error();
  return TlsChannel(std::move(*done));
}

Result<TlsChannel, TlsError> TlsChannel::accept(const Fd& fd, KeyLookup keys, Deadline d,
                                                NameCheck names) {
  auto st = new_state(fd, true);
  if (!st) return st.error();
  (*st)->keys = std::move(keys);
  (*st)->names = std::move(names);
  auto done = server_handshake(std::move(*st), d);
  if (!done) return done.error();
  return TlsChannel(std::move(*done));
}

Result<TlsChannel, TlsError> TlsChannel::accept(const Fd& fd, const TlsCerts& certs, Deadline d) {
  auto st = new_state(fd, true, certs);
  if (!st) return st.error();
  auto done = server_handshake(std::move(*st), d);
  if (!done) return done.error();
  return TlsChannel(std::move(*done));
}

Result<Unit, TlsError> TlsChannel::send_frame(const nlohmann::json& msg, Deadline d) {
  const std::string body = msg.dump();
  if (auto s = check_frame_length(static_cast<uint32_t>(body.size())); !s) {
    return TlsError{TlsFault::kProtocol, s.error()};
  }
  const uint32_t n = htonl(static_cast<uint32_t>(body.size()));
  std::string frame(reinterpret_cast<const char*>(&n), 4);
  frame += body;
  SSL* ssl = s_->ssl.get();
  auto w = drive(
      *s_, [&] { return SSL_write(ssl, frame.data(), static_cast<int>(frame.size())); }, d,
      "TLS write");
  if (!w) return w.error();
  return Unit{};
}

Result<nlohmann::json, TlsError> TlsChannel::recv_frame(Deadline d, uint32_t max) {
  SSL* ssl = s_->ssl.get();
  auto need = [&](size_t n) -> Result<Unit, TlsError> {
    std::array<char, 16384> buf{};
    while (s_->plain.size() < n) {
      auto r = drive(
          *s_, [&] { return SSL_read(ssl, buf.data(), static_cast<int>(buf.size())); }, d,
          "TLS read");
      if (!r) return r.error();
      s_->plain.append(buf.data(), static_cast<size_t>(*r));
    }
    return Unit{};
  };
  if (auto r = need(4); !r) return r.error();
  uint32_t n = 0;
  std::memcpy(&n, s_->plain.data(), 4);
  n = ntohl(n);
  if (auto s = check_frame_length(n, max); !s) return TlsError{TlsFault::kProtocol, s.error()};
  if (auto r = need(4 + static_cast<size_t>(n)); !r) return r.error();
  const std::string body = s_->plain.substr(4, n);
  s_->plain.erase(0, 4 + static_cast<size_t>(n));
  auto j = decode_frame_body(body);
  if (!j) return TlsError{TlsFault::kProtocol, j.error()};
  return std::move(*j);
}

void TlsChannel::close(Deadline d) {
  if (!s_) return;
  ERR_clear_error();
  SSL_shutdown(s_->ssl.get());
  (void)flush(*s_, d);
  ERR_clear_error();
}

bool TlsChannel::buffered() const {
  return !s_->plain.empty() || SSL_pending(s_->ssl.get()) > 0 || BIO_ctrl_pending(s_->in) > 0;
}

const std::string& TlsChannel::identity() const { return s_->identity; }
const std::string& TlsChannel::server_name() const { return s_->sni; }
std::string TlsChannel::version() const { return SSL_get_version(s_->ssl.get()); }
const TlsCerts& TlsChannel::certs() const { return s_->certs; }
std::optional<std::chrono::system_clock::time_point> TlsChannel::peer_not_after() const {
  if (!s_->certs) return std::nullopt;
  return detail::peer_not_after(s_->ssl.get());
}
std::string TlsChannel::cipher() const {
  const SSL_CIPHER* c = SSL_get_current_cipher(s_->ssl.get());
  return c != nullptr ? SSL_CIPHER_get_name(c) : "";
}

namespace detail {

std::string openssl_errors() {
  std::string out;
  while (const unsigned long e = ERR_get_error()) {
    std::array<char, 256> buf{};
    ERR_error_string_n(e, buf.data(), buf.size());
    out += (out.empty() ? "" : "; ") + std::string(buf.data());
  }
  return out;
}

bool restrict_to_tls13(SSL_CTX* ctx) {
  return SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION) == 1 &&
         SSL_CTX_set_max_proto_version(ctx, TLS1_3_VERSION) == 1 &&
         SSL_CTX_set_ciphersuites(ctx, "TLS_AES_128_GCM_SHA256") == 1;
}

}  // namespace detail

}  // namespace rdmacheck
