#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <array>
#include <string_view>

#include "net/tls_state.h"

namespace rdmacheck::detail {
namespace {

// One suite: a PSK's hash must match the suite's; AES-GCM is what CPUs accelerate.
constexpr std::array<unsigned char, 2> kAes128GcmSha256 = {0x13, 0x01};
constexpr std::string_view kPskLabel = "rdmacheck TLS 1.3 external PSK v1";

std::string derive_psk(const std::string& secret) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> out{};
  unsigned int len = 0;
  HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()),
       reinterpret_cast<const unsigned char*>(kPskLabel.data()), kPskLabel.size(), out.data(),
       &len);
  return {reinterpret_cast<const char*>(out.data()), len};
}

// The session that carries a PSK into OpenSSL (its "master key"), which frees it.
SSL_SESSION* psk_session(SSL* ssl, const std::string& secret) {
  const SSL_CIPHER* cipher = SSL_CIPHER_find(ssl, kAes128GcmSha256.data());
  SSL_SESSION* s = cipher != nullptr ? SSL_SESSION_new() : nullptr;
  if (s == nullptr) return nullptr;
  const std::string psk = derive_psk(secret);
  if (SSL_SESSION_set1_master_key(s, reinterpret_cast<const unsigned char*>(psk.data()),
                                  psk.size()) != 1 ||
      SSL_SESSION_set_cipher(s, cipher) != 1 ||
      SSL_SESSION_set_protocol_version(s, TLS1_3_VERSION) != 1) {
    SSL_SESSION_free(s);
    return nullptr;
  }
  return s;
}

TlsState* state_of(SSL* ssl) { return static_cast<TlsState*>(SSL_get_app_data(ssl)); }

}  // namespace

int use_session(SSL* ssl, const EVP_MD* md, const unsigned char** id, size_t* idlen,
                SSL_SESSION** sess) {
  TlsState* st = state_of(ssl);
  if (md != nullptr && EVP_MD_get_size(md) != 32) return 0;  // only SHA-256 suites are offered
  *sess = psk_session(ssl, st->key.secret);
  if (*sess == nullptr) return 0;
  *id = reinterpret_cast<const unsigned char*>(st->key.identity.data());
  *idlen = st->key.identity.size();
  return 1;
}

int find_session(SSL* ssl, const unsigned char* identity, size_t len, SSL_SESSION** sess) {
  TlsState* st = state_of(ssl);
  st->identity.assign(reinterpret_cast<const char*>(identity), len);
  *sess = nullptr;
  const auto secret = st->keys ? st->keys(st->identity) : std::nullopt;
  if (!secret) {
    st->unknown_identity = true;
    return 1;  // no PSK: without a certificate the handshake then fails, which says so
  }
  *sess = psk_session(ssl, *secret);
  return *sess != nullptr ? 1 : 0;
}

int check_server_name(SSL* ssl, int* alert, void* /*arg*/) {
  TlsState* st = state_of(ssl);
  if (st == nullptr || !st->names) return SSL_TLSEXT_ERR_OK;
  const char* name = SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name);
  st->sni = name != nullptr ? name : "";
  if (st->names(st->sni)) return SSL_TLSEXT_ERR_OK;
  st->wrong_name = true;
  *alert = SSL_AD_UNRECOGNIZED_NAME;
  return SSL_TLSEXT_ERR_ALERT_FATAL;
}

}  // namespace rdmacheck::detail
