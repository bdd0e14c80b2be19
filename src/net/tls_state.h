// One TLS connection's state (net/tls.cc) and the pre-shared-key callbacks
// OpenSSL calls with it (net/tls_psk.cc). Internal to net/.
#pragma once

#include <openssl/ssl.h>

#include <memory>
#include <string>

#include "net/tls.h"

namespace rdmacheck::detail {

struct OpenSslFree {
  void operator()(SSL_CTX* c) const noexcept { SSL_CTX_free(c); }
  void operator()(SSL* s) const noexcept { SSL_free(s); }
};

struct TlsState {
  int fd = -1;
  bool server = false;
  std::unique_ptr<SSL_CTX, OpenSslFree> ctx;
  std::unique_ptr<SSL, OpenSslFree> ssl;
  BIO* in = nullptr;   // what came from the peer, for OpenSSL to read (owned by ssl)
  BIO* out = nullptr;  // what OpenSSL wrote, for the peer (owned by ssl)
  TlsKey key;          // the client's
  TlsChannel::KeyLookup keys;
  std::string identity;
  std::string sni;
  bool unknown_identity = false;  // the server had no key for the client's identity
  TlsChannel::NameCheck names;    // (server) the names it answers to; empty: any
  bool wrong_name = false;        // (server) the client dialled a name it does not answer to
  bool heard = false;             // any byte from the peer yet
  TlsCerts certs;                 // certificate mode: the shared context (ctx stays empty)
  std::string plain;              // decrypted bytes not yet taken by recv_frame
};

// Every error OpenSSL queued, "; "-separated, and the queue emptied.
std::string openssl_errors();
// CTX speaks TLS 1.3 only, with the one suite both modes use
// (TLS_AES_128_GCM_SHA256: a PSK's hash must match the suite's; AES-GCM is
// what CPUs accelerate); false when OpenSSL refused.
bool restrict_to_tls13(SSL_CTX* ctx);

// OpenSSL's PSK callbacks (SSL_CTX_set_psk_use_session_callback, ..._find_):
// the client offers its identity and key, the server looks the identity up
// in its key ring (TlsState::keys). The PSK is HMAC-SHA256 of the secret
// with a fixed label, for TLS_AES_128_GCM_SHA256.
int use_session(SSL* ssl, const EVP_MD* md, const unsigned char** id, size_t* idlen,
                SSL_SESSION** sess);
int find_session(SSL* ssl, const unsigned char* identity, size_t len, SSL_SESSION** sess);
// The server's SNI callback (SSL_CTX_set_tlsext_servername_callback): the
// client's name against TlsState::names; unrecognized_name when refused.
int check_server_name(SSL* ssl, int* alert, void* arg);

}  // namespace rdmacheck::detail
