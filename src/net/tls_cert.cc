// Certificate mode of net/tls.h: the shared SSL_CTX of a side's
// certificate, key, CA and CRL, and what a handshake needs of them.
#include <fmt/core.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <array>
#include <cstdio>
#include <ctime>

#include "base/secret_file.h"
#include "net/tls.h"
#include "net/tls_fault.h"
#include "net/tls_state.h"

namespace rdmacheck {
namespace {

Error cert_error(const std::string& what, const std::string& file) {
  const std::string why = detail::openssl_errors();
  return plain_error(what, fmt::format("{}: {}", file, why.empty() ? "cannot be used" : why));
}

// The subject CN of CERT, "" without one.
std::string common_name(X509* cert) {
  if (cert == nullptr) return "";
  std::array<char, 256> cn{};
  const int n = X509_NAME_get_text_by_NID(X509_get_subject_name(cert), NID_commonName, cn.data(),
                                          static_cast<int>(cn.size()));
  return n > 0 ? std::string(cn.data(), static_cast<size_t>(n)) : "";
}

// Reads the CRL in FILE into STORE and turns on revocation checks for the leaf.
bool add_crl(X509_STORE* store, const std::string& file) {
  std::FILE* f = std::fopen(file.c_str(), "r");
  if (f == nullptr) return false;
  X509_CRL* crl = PEM_read_X509_CRL(f, nullptr, nullptr, nullptr);
  std::fclose(f);
  if (crl == nullptr) return false;
  const int ok = X509_STORE_add_crl(store, crl);
  X509_CRL_free(crl);
  return ok == 1 && X509_STORE_set_flags(store, X509_V_FLAG_CRL_CHECK) == 1;
}

}  // namespace

namespace detail {

std::string peer_common_name(SSL* ssl) {
  X509* peer = SSL_get1_peer_certificate(ssl);
  std::string cn = common_name(peer);
  X509_free(peer);
  return cn;
}

std::optional<std::chrono::system_clock::time_point> peer_not_after(SSL* ssl) {
  const X509* peer = SSL_get0_peer_certificate(ssl);
  std::tm end{};
  if (peer == nullptr || ASN1_TIME_to_tm(X509_get0_notAfter(peer), &end) != 1) return std::nullopt;
  return std::chrono::system_clock::from_time_t(::timegm(&end));
}

bool expect_server_name(SSL* ssl, const std::string& name) {
  X509_VERIFY_PARAM* p = SSL_get0_param(ssl);
  // An address is checked against the certificate's IP entries, a name against its DNS ones.
  if (X509_VERIFY_PARAM_set1_ip_asc(p, name.c_str()) == 1) return true;
  ERR_clear_error();
  X509_VERIFY_PARAM_set_hostflags(p, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
  return SSL_set1_host(ssl, name.c_str()) == 1;
}

}  // namespace detail

Result<std::shared_ptr<const TlsCertContext>> TlsCertContext::load(const TlsCertFiles& files,
                                                                   bool server) {
  std::shared_ptr<TlsCertContext> c(new TlsCertContext());
  c->files_ = files;
  SSL_CTX* ctx = SSL_CTX_new(server ? TLS_server_method() : TLS_client_method());
  if (ctx == nullptr) return cert_error("SSL_CTX_new", "TLS");
  c->ctx_ = ctx;
  if (!detail::restrict_to_tls13(ctx)) return cert_error("TLS 1.3", "ciphersuites");
  if (SSL_CTX_use_certificate_chain_file(ctx, files.cert.c_str()) != 1) {
    return cert_error("certificate", files.cert);
  }
  if (const std::string unsafe = secret_file_problem(files.key); !unsafe.empty()) {
    return plain_error("private key", unsafe);
  }
  if (SSL_CTX_use_PrivateKey_file(ctx, files.key.c_str(), SSL_FILETYPE_PEM) != 1 &&
      ERR_GET_REASON(ERR_peek_last_error()) != X509_R_KEY_VALUES_MISMATCH) {
    return cert_error("private key", files.key);
  }
  if (SSL_CTX_check_private_key(ctx) != 1) {
    ERR_clear_error();
    return plain_error("private key", fmt::format("{} is not the key of the certificate in {}",
                                                  files.key, files.cert));
  }
  if (SSL_CTX_load_verify_locations(ctx, files.ca.c_str(), nullptr) != 1) {
    return cert_error("CA", files.ca);
  }
  if (server && !files.crl.empty() && !add_crl(SSL_CTX_get_cert_store(ctx), files.crl)) {
    return cert_error("CRL", files.crl);
  }
  SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | (server ? SSL_VERIFY_FAIL_IF_NO_PEER_CERT : 0),
                     nullptr);
  if (server) SSL_CTX_set_num_tickets(ctx, 0);  // nothing to resume
  c->subject_ = common_name(SSL_CTX_get0_certificate(ctx));
  std::tm end{};
  if (ASN1_TIME_to_tm(X509_get0_notAfter(SSL_CTX_get0_certificate(ctx)), &end) == 1) {
    c->not_after_ = std::chrono::system_clock::from_time_t(::timegm(&end));
  }
  return std::shared_ptr<const TlsCertContext>(std::move(c));
}

TlsCertContext::~TlsCertContext() { SSL_CTX_free(static_cast<SSL_CTX*>(ctx_)); }

}  // namespace rdmacheck
