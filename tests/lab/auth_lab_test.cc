// Who may use a server, on the real stack: the lab's own key (a one-line key
// ring: TLS 1.3) opens a session; no key or a wrong one ends in an auth-*
// finding before the server has made any verbs object; a ring of two
// identities serves both until one is removed and the server re-reads it; --allow keeps another
// host out; and a hello that names a third host's GID is refused, so that host receives no RoCE
// packet; and bytes changed on the path after the TLS handshake end the
// session as tampered.
#include <gtest/gtest.h>

#include "lab/lab_harness.h"

namespace rdmacheck::labtest {
namespace {

const char* kWaitForH2Run3 = "while [ ! -e /run/lab/h2/rc.3 ]; do sleep 0.1; done; ";

// h1: a second server on a ring of two identities (made by keygen), which
// drops "other" from the ring and re-reads it (SIGHUP) once h2 has used both.
// Each step waits for the other host's marker file (ring-*: the lab's own
// files in $D, such as ready and done, mean something else), never for a
// time. The client lines cross to h2 through h1's directory and become 0600
// key files in h2's own /tmp.
const char* kRingServer =
    "h1:cd /run/lab/h1 && rdmacheck keygen h2 --ring ring > h2.line && "
    "rdmacheck keygen other --ring ring > other.line && "
    "{ rdmacheck serve --psk-file ring --server-name h1 --port 18800 > ring-serve.log 2>&1 & "
    "echo $! > pid; } && "
    "until grep -q 'listening on' ring-serve.log; do sleep 0.1; done && touch ring-ready && "
    "until [ -e /run/lab/h2/ring-used-both ]; do sleep 0.1; done && "
    "grep -v '^other ' ring > ring.new && cat ring.new > ring && kill -HUP $(cat pid) && "
    "until grep -q 'SIGHUP: key ring re-read, 1 identities' ring-serve.log; do sleep 0.1; done && "
    "touch ring-revoked && until [ -e /run/lab/h2/ring-done ]; do sleep 0.1; done; cat "
    "ring-serve.log";
// h2: each identity's ping, then after the revocation both again; then h2
// dialling h1-1 (a name of h1's address the server was not given: as a
// relay's client would, having dialled another server) and h1's address.
// One JSON array.
const char* kRingClients =
    "h2:K=/run/lab/h1; until [ -e $K/ring-ready ]; do sleep 0.1; done; umask 077; "
    "cat $K/h2.line > /tmp/h2.key; cat $K/other.line > /tmp/other.key; P='rdmacheck ping h1 -p "
    "18800 -n 2 --no-ladder --json'; "
    "$P --psk-file /tmp/h2.key > /tmp/r1; $P --psk-file /tmp/other.key > /tmp/r2; "
    "touch /run/lab/h2/ring-used-both; until [ -e $K/ring-revoked ]; do sleep 0.1; done; "
    "$P --psk-file /tmp/other.key > /tmp/r3; $P --psk-file /tmp/h2.key > /tmp/r4; "
    "Q='rdmacheck ping -p 18800 -n 2 --no-ladder --json --psk-file /tmp/h2.key'; "
    "$Q h1-1 > /tmp/r5; $Q 198.18.0.1 > /tmp/r6; "
    "touch /run/lab/h2/ring-done; jq -s . /tmp/r1 /tmp/r2 /tmp/r3 /tmp/r4 /tmp/r5 /tmp/r6";

// h1: a second server in certificate mode (mutual TLS) on a PKI the test
// makes (tests/pki/make-test-pki: the openssl CLI), with the CA's CRL; once
// h2 has used it, h1 revokes h2's certificate (openssl ca -revoke, a new
// CRL) and re-reads it (SIGHUP). Marker files (cert-*) order the steps.
const char* kCertServer =
    "h1:cd /run/lab/h1 && " LAB_MAKE_TEST_PKI
    " pki && cd pki && { rdmacheck serve --tls-cert server.pem --tls-key server.key --tls-ca "
    "ca.pem --tls-crl crl.pem --port 18801 > ../cert-serve.log 2>&1 & echo $! > ../cert-pid; } && "
    "until grep -q 'listening on' ../cert-serve.log; do sleep 0.1; done && touch ../cert-ready && "
    "until [ -e /run/lab/h2/cert-used ]; do sleep 0.1; done && "
    "openssl ca -config ca.cnf -cert ca.pem -keyfile ca.key -revoke h2.pem 2>/dev/null && "
    "openssl ca -config ca.cnf -cert ca.pem -keyfile ca.key -gencrl -out crl.pem 2>/dev/null && "
    "kill -HUP $(cat ../cert-pid) && until grep -q 'SIGHUP: certificate' ../cert-serve.log; do "
    "sleep 0.1; done && touch ../cert-revoked && until [ -e /run/lab/h2/cert-done ]; do sleep "
    "0.1; done; cat ../cert-serve.log";
// h2: its certificate by name (admitted), by an address the server's
// certificate does not hold (the client refuses the server), the revoked
// "old" (the server refuses it); after h1 revoked h2, h2 again.
const char* kCertClients =
    "h2:K=/run/lab/h1/pki; until [ -e /run/lab/h1/cert-ready ]; do sleep 0.1; done; umask 077; "
    "for f in h2.pem h2.key old.pem old.key ca.pem; do cat $K/$f > /tmp/$f; done; "
    "P='rdmacheck ping -p 18801 -n 2 --no-ladder --json --tls-ca /tmp/ca.pem'; "
    "$P h1 --tls-cert /tmp/h2.pem --tls-key /tmp/h2.key > /tmp/c1; "
    "$P 198.18.0.1 --tls-cert /tmp/h2.pem --tls-key /tmp/h2.key > /tmp/c2; "
    "$P h1 --tls-cert /tmp/old.pem --tls-key /tmp/old.key > /tmp/c3; "
    "touch /run/lab/h2/cert-used; until [ -e /run/lab/h1/cert-revoked ]; do sleep 0.1; done; "
    "$P h1 --tls-cert /tmp/h2.pem --tls-key /tmp/h2.key > /tmp/c4; "
    "touch /run/lab/h2/cert-done; jq -s . /tmp/c1 /tmp/c2 /tmp/c3 /tmp/c4";

// h2: a ping client that stops (SIGSTOP) once its session has started, its
// TCP connection left open, as a client whose host hung would: the server
// ends the session when the client's budget (--timeout 10) and the grace
// are over, not after --session-timeout (120 s), and logs it.
// The client's budget is 10 s: its session must still be running when this
// script sees it start and stops it (with --timeout 3 the ping once finished
// first under a loaded CI machine, and the wait below then ran to the lab's
// deadline); a ping that ended anyway fails the run at once.
const char* kStalledClient =
    "h2:L=/run/lab/h1/serve.log; n=$(grep -c ' start: ' $L); "
    "rdmacheck ping h1 -n 1000 --interval 0.2 --timeout 10 --no-ladder > /dev/null 2>&1 & P=$!; "
    "until [ $(grep -c ' start: ' $L) -gt $n ]; do sleep 0.1; done; "
    "kill -STOP $P || { echo 'the ping ended before it could be stopped'; exit 1; }; "
    "until grep -q 'end: session time limit reached' $L; do sleep 0.2; done; kill -KILL $P; "
    "grep 'end: session time limit reached' $L";

// Certificate mode: h2 by name admitted, by an address the server's
// certificate lacks refused by the client, the revoked "old" refused by the
// server, then h2 refused after h1 revoked it (a new CRL, SIGHUP).
void expect_certificates(const LabRun& r, size_t h1_run, size_t h2_run) {
  ASSERT_EQ(run_exit(r, "h2", h2_run), 0) << r.console;
  const auto& runs = run_output(r, "h2", h2_run);
  ASSERT_TRUE(runs.is_array() && runs.size() == 4) << r.console;
  EXPECT_EQ(runs[0]["ok"], true) << runs[0].dump(2);
  // make-test-pki's certificates live two days: the session works and says
  // that both of its certificates end within 30 days, each with its date.
  EXPECT_EQ(finding_ids(runs[0]["findings"]), std::vector<std::string>{"certificate-expiring"})
      << runs[0].dump(2);
  const std::string ending = runs[0]["findings"].dump();
  EXPECT_NE(ending.find("this client's certificate /tmp/h2.pem (CN h2) expires "),
            std::string::npos)
      << ending;
  EXPECT_NE(ending.find("the server's certificate (CN h1) expires "), std::string::npos) << ending;
  EXPECT_EQ(finding_ids(runs[1]["findings"]), std::vector<std::string>{"auth-server-unproven"})
      << runs[1].dump(2);
  EXPECT_NE(runs[1]["findings"][0]["evidence"].dump().find("does not name '198.18.0.1'"),
            std::string::npos)
      << runs[1].dump(2);
  for (int i : {2, 3}) {
    EXPECT_EQ(finding_ids(runs[i]["findings"]), std::vector<std::string>{"auth-failed"})
        << runs[i].dump(2);
  }
  const std::string log = run_output(r, "h1", h1_run).get<std::string>();
  EXPECT_NE(log.find("[certificate h2, TLSv1.3 TLS_AES_128_GCM_SHA256]"), std::string::npos) << log;
  EXPECT_NE(log.find("must present a certificate from ca.pem"), std::string::npos) << log;
  // old is refused for its revocation, and so is h2 after the new CRL.
  size_t revoked = 0;
  for (size_t at = log.find("certificate revoked"); at != std::string::npos;
       at = log.find("certificate revoked", at + 1)) {
    ++revoked;
  }
  EXPECT_EQ(revoked, 2u) << log;
  EXPECT_NE(log.find("SIGHUP: certificate, key, CA and CRL re-read"), std::string::npos) << log;
  EXPECT_NE(log.find("certificate server.pem (CN h1) expires "), std::string::npos) << log;
}

// One boot (a boot costs 15-30 s before anything runs): the lab's key, no
// key and a wrong key; a ring of two identities, one revoked; certificate
// mode on a third server.
TEST(AuthLab, KeyRingAndCertificatesOpenSessionsAndEveryRefusalStopsBeforeVerbs) {
  const auto r = run_lab({
      "--run",
      "h2:rdmacheck ping h1 -n 2 --no-ladder --json",
      "--run",
      "h2:env -u RDMACHECK_PSK_FILE rdmacheck ping h1 --json",
      "--run",
      // The lab's identity with another key (as a stale copy of a rotated key is).
      "h2:rdmacheck keygen lab -o /tmp/wrong.psk; "
      "rdmacheck ping h1 --psk-file /tmp/wrong.psk --json",
      "--run",
      "h2:cat /run/lab/h1/serve.log",
      // Once h2's refused clients are done: which QPs exist on the server.
      "--run",
      std::string("h1:") + kWaitForH2Run3 + "rdmacheck qps --json",
      "--run",
      kRingServer,
      "--run",
      kRingClients,
      "--run",
      kCertServer,
      "--run",
      kCertClients,
      "--run",
      kStalledClient,
  });
  ASSERT_EQ(r.exit, 2) << r.console;  // the refused clients fail, as they should
  const auto& good = run_output(r, "h2", 0);
  ASSERT_TRUE(good.is_object()) << r.console;
  EXPECT_EQ(good["ok"], true) << good.dump(2);
  EXPECT_EQ(good["summary"]["received"], 2);
  const auto& none = run_output(r, "h2", 1);
  ASSERT_TRUE(none.is_object()) << r.console;
  EXPECT_EQ(none["failed_stage"], "auth");
  EXPECT_EQ(finding_ids(none["findings"]), std::vector<std::string>{"auth-required"});
  const auto& wrong = run_output(r, "h2", 2);
  ASSERT_TRUE(wrong.is_object()) << r.console;
  EXPECT_EQ(finding_ids(wrong["findings"]), std::vector<std::string>{"auth-failed"});
  EXPECT_FALSE(wrong["findings"][0]["fix"].get<std::string>().empty());
  // The server logged both refusals and started no test for them: sessions 2
  // and 3 have an end line and no start line (the start line comes before
  // the first verbs call of a session).
  const std::string log = run_output(r, "h2", 3).get<std::string>();
  EXPECT_NE(log.find("must prove their identity's key in /run/lab/lab.psk (1 identities; "
                     "TLS 1.3"),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("session 1 198.18.0.2"), std::string::npos) << log;
  EXPECT_NE(log.find("[identity lab, TLSv1.3 TLS_AES_128_GCM_SHA256]"), std::string::npos) << log;
  EXPECT_NE(log.find("end: ok"), std::string::npos) << log;
  EXPECT_NE(log.find("session 2 198.18.0.2:"), std::string::npos) << log;
  EXPECT_NE(log.find("end: auth-required"), std::string::npos) << log;
  EXPECT_NE(log.find("end: auth-failed"), std::string::npos) << log;
  EXPECT_NE(log.find("identity 'lab' is not this server's"), std::string::npos) << log;
  for (const char* s : {"session 2 ", "session 3 "}) {
    const auto line_start = log.find(s);
    const auto line_end = log.find('\n', line_start);
    EXPECT_EQ(log.substr(line_start, line_end - line_start).find("start:"), std::string::npos)
        << log;
  }
  // No QP of ours on the server: only the kernel's own (GSI) remains.
  const auto& qps = run_output(r, "h1", 0);
  ASSERT_TRUE(qps.is_object()) << r.console;
  for (const auto& q : qps["qps"]) {
    EXPECT_EQ(q["kernel"], true) << qps.dump(2);
  }
  // The ring: both identities served, then "other" refused after the
  // re-read while h2 still is; the log names each identity and the refusal.
  const auto& ring = run_output(r, "h2", 4);
  ASSERT_TRUE(ring.is_array() && ring.size() == 6) << r.console;
  for (size_t i : {0u, 1u, 3u, 5u}) EXPECT_EQ(ring[i]["ok"], true) << i << ring[i].dump(2);
  EXPECT_EQ(ring[2]["failed_stage"], "auth") << ring[2].dump(2);
  EXPECT_EQ(finding_ids(ring[2]["findings"]), std::vector<std::string>{"auth-failed"});
  const std::string ring_log = run_output(r, "h1", 1).get<std::string>();
  EXPECT_NE(ring_log.find("(2 identities; TLS 1.3; SIGHUP re-reads); they must dial h1 or an "
                          "address of this host"),
            std::string::npos)
      << ring_log;
  // --server-name h1: h1-1 is refused in the handshake, h1's own address is not.
  EXPECT_EQ(finding_ids(ring[4]["findings"]), std::vector<std::string>{"auth-server-unproven"})
      << ring[4].dump(2);
  EXPECT_NE(ring[4]["findings"][0]["evidence"].dump().find("does not answer to 'h1-1'"),
            std::string::npos)
      << ring[4].dump(2);
  EXPECT_NE(ring_log.find("the client dialled 'h1-1', a name this server does not answer to"),
            std::string::npos)
      << ring_log;
  EXPECT_NE(ring_log.find("[identity h2, TLSv1.3"), std::string::npos) << ring_log;
  EXPECT_NE(ring_log.find("[identity other, TLSv1.3"), std::string::npos) << ring_log;
  EXPECT_NE(ring_log.find("the client named identity 'other', which this server holds no key "
                          "for (unknown, or revoked)"),
            std::string::npos)
      << ring_log;
  expect_certificates(r, 2, 5);
  // The stalled client's session ended by its budget: well under 120 s.
  const auto& stalled = run_output(r, "h2", 6);
  ASSERT_TRUE(stalled.is_string()) << r.console;
  const std::string line = stalled.get<std::string>();
  const auto ms_at = line.find(" ms)");
  ASSERT_NE(ms_at, std::string::npos) << line;
  const auto from = line.rfind(' ', ms_at - 1);
  const double ms = std::stod(line.substr(from + 1, ms_at - from - 1));
  EXPECT_GT(ms, 5000) << line;   // not before the client's own budget (10 s from its start)
  EXPECT_LT(ms, 30000) << line;  // its budget and 5 s of grace; --session-timeout is 120 s
}

// h2's control connection is NATed to 198.18.0.22 (an nft snat rule for TCP
// to h1's 4792, h2 holding the address for the replies) while its rdma_cm
// request still comes from 198.18.0.2: the server rejects the request for
// its address and says so in its bye, so the client names the mismatch.
const char* kSnatControl =
    "ip addr add 198.18.0.22/24 dev eth0 && nft add table ip nat && nft add chain ip nat post "
    "'{ type nat hook postrouting priority 100; }' && nft add rule ip nat post ip daddr "
    "198.18.0.1 tcp dport 4792 snat to 198.18.0.22 && ";

TEST(AuthLab, AllowListAndNoReflectionKeepAThirdHostOutOfItAlsoForRdmaCm) {
  const auto r = run_lab({
      "--hosts",
      "3",
      "--serve-args",
      "--allow 198.18.0.1 --allow 198.18.0.2 --allow 198.18.0.22",
      // A hello that names h3's GID (::ffff:198.18.0.3) instead of h2's own.
      "--run",
      "h2:rdmacheck ping h1 -n 1 --no-ladder --forge-gid "
      "0000:0000:0000:0000:0000:ffff:c612:0003 --json",
      "--run",
      "h2:rdmacheck ping h1 -n 1 --no-ladder --json",
      "--run",
      "h2:cat /run/lab/h1/serve.log",
      // rdma_cm's connect requests are held to --allow too: h2 is admitted
      // over TCP from 198.18.0.2, its request from a second address is not.
      "--run",
      "h2:ip addr add 198.18.0.12/24 dev eth0 && "
      "rdmacheck ping h1 --cm --src 198.18.0.12 -n 1 --no-ladder --json",
      "--run",
      "h2:rdmacheck ping h1 --cm -n 1 --no-ladder --json",
      // An admitted request must also come from the control connection's
      // address: here the TCP connection is NATed to 198.18.0.22.
      "--run",
      std::string("h2:") + kSnatControl + "rdmacheck ping h1 --cm -n 1 --no-ladder --json",
      "--run",
      "h2:cat /run/lab/h1/serve.log",
      "--run",
      "h3:rdmacheck ping h1 --json",
      // After h2's forged hello: h3 received no RoCE packet at all.
      "--run",
      std::string("h3:") + kWaitForH2Run3 +
          "cat /sys/class/infiniband/rxe0/ports/1/hw_counters/rcvd_pkts",
  });
  ASSERT_EQ(r.exit, 2) << r.console;
  const auto& forged = run_output(r, "h2", 0);
  ASSERT_TRUE(forged.is_object()) << r.console;
  EXPECT_EQ(finding_ids(forged["findings"]), std::vector<std::string>{"server-refused"});
  EXPECT_NE(forged["findings"][0]["summary"].get<std::string>().find(
                "hello names GID 0000:0000:0000:0000:0000:ffff:c612:0003"),
            std::string::npos)
      << forged.dump(2);
  EXPECT_EQ(run_output(r, "h2", 1)["ok"], true) << r.console;  // h2 itself is served
  const std::string log = run_output(r, "h2", 2).get<std::string>();
  EXPECT_NE(log.find("refused 198.18.0.3:"), std::string::npos) << log;
  EXPECT_NE(log.find("not in --allow"), std::string::npos) << log;
  EXPECT_NE(log.find("end: refused: the hello names GID"), std::string::npos) << log;
  const auto& h3 = run_output(r, "h3", 0);
  ASSERT_TRUE(h3.is_object()) << r.console;
  EXPECT_EQ(finding_ids(h3["findings"]), std::vector<std::string>{"auth-not-allowed"});
  EXPECT_EQ(run_exit(r, "h3", 1), 0);
  const auto& pkts = run_output(r, "h3", 1);
  EXPECT_TRUE((pkts.is_number() && pkts.get<int>() == 0) ||
              (pkts.is_string() && pkts.get<std::string>().find('0') == 0))
      << pkts.dump();
  const auto& other = run_output(r, "h2", 3);
  ASSERT_TRUE(other.is_object()) << r.console;
  EXPECT_EQ(finding_ids(other["findings"]), std::vector<std::string>{"cm-rejected"});
  EXPECT_EQ(run_output(r, "h2", 4)["ok"], true) << r.console;
  // The request from another address than the (NATed) control connection.
  const auto& natted = run_output(r, "h2", 5);
  ASSERT_TRUE(natted.is_object()) << r.console;
  EXPECT_EQ(finding_ids(natted["findings"]), std::vector<std::string>{"cm-rejected"});
  const std::string said = natted["findings"][0].dump();
  EXPECT_NE(said.find("the server: the rdma_cm connect request came from 198.18.0.2, not from "
                      "the control connection's client 198.18.0.22"),
            std::string::npos)
      << natted.dump(2);
  EXPECT_NE(said.find("no NAT or proxy"), std::string::npos) << said;
  const std::string cm_log = run_output(r, "h2", 6).get<std::string>();
  EXPECT_NE(cm_log.find("refused: the rdma_cm connect request came from 198.18.0.2, not from "
                        "the control connection's client 198.18.0.22"),
            std::string::npos)
      << cm_log;
  EXPECT_NE(cm_log.find("refused rdma_cm connect request from 198.18.0.12: not in --allow"),
            std::string::npos)
      << cm_log;
}

// h3 relays h2's sessions to h1's serve and changes one byte after the TLS
// handshake (tests/lab/tamper_relay.cc): in the client's first frame, then
// in the server's answer. Each session stops with session-tampered, said by
// the side whose TLS caught it (the other learns it from the alert), and
// nothing measured is reported. h3 starts both relays, says so with its
// marker file and waits for h2's.
const std::string kRelays =
    std::string("h3:cd /run/lab/h3 && { " LAB_TAMPER_RELAY
                " 18801 198.18.0.1 4792 to-server > relay-s.log 2>&1 & } && { " LAB_TAMPER_RELAY
                " 18802 198.18.0.1 4792 to-client > relay-c.log 2>&1 & } && "
                "until grep -q listening relay-s.log && grep -q listening relay-c.log; do sleep "
                "0.1; done && touch relays-ready && until [ -e /run/lab/h2/tamper-done ]; do "
                "sleep 0.1; done; cat relay-s.log relay-c.log");
const char* kThroughTheRelays =
    "h2:until [ -e /run/lab/h3/relays-ready ]; do sleep 0.1; done; "
    "P='rdmacheck ping h3 -n 2 --no-ladder --json'; $P -p 18801 > /tmp/t1; echo $? > /tmp/t1.rc; "
    "$P -p 18802 > /tmp/t2; echo $? > /tmp/t2.rc; touch /run/lab/h2/tamper-done; "
    "jq -s . /tmp/t1 /tmp/t2";

TEST(AuthLab, ABytesChangedOnThePathAfterTheHandshakeEndsTheSessionAsTampered) {
  const auto r = run_lab({
      "--hosts",
      "3",
      "--run",
      kRelays,
      "--run",
      kThroughTheRelays,
      "--run",
      "h2:cat /tmp/t1.rc /tmp/t2.rc",
      "--run",
      // The server's end line for the first session (bounded: a failure, not a hang).
      "h2:timeout 60 sh -c 'until grep -q \"failed its integrity\" /run/lab/h1/serve.log; do "
      "sleep 0.1; done'; cat /run/lab/h1/serve.log",
  });
  ASSERT_EQ(run_exit(r, "h2", 0), 0) << r.console;
  const auto& pings = run_output(r, "h2", 0);
  ASSERT_TRUE(pings.is_array() && pings.size() == 2) << r.console;
  const std::vector<std::string> tampered{"session-tampered"};
  for (const auto& p : pings) {
    EXPECT_EQ(p["ok"], false) << p.dump(2);
    EXPECT_EQ(finding_ids(p["findings"]), tampered) << p.dump(2);
  }
  const std::string mine = pings[0]["findings"][0]["evidence"].dump();
  EXPECT_NE(mine.find("bad_record_mac"), std::string::npos)
      << pings[0].dump(2);  // the server's alert
  const std::string theirs = pings[1]["findings"][0]["evidence"].dump();
  EXPECT_NE(theirs.find("failed its integrity check"), std::string::npos) << pings[1].dump(2);
  const std::string rcs = run_output(r, "h2", 1).dump();
  EXPECT_EQ(rcs.find('0'), std::string::npos) << rcs;  // both pings exit non-zero
  const std::string relays = run_output(r, "h3", 0).get<std::string>();
  EXPECT_NE(relays.find("flipped byte"), std::string::npos) << relays;
  EXPECT_NE(relays.find("of the client's application-data record 2"), std::string::npos) << relays;
  EXPECT_NE(relays.find("of the server's application-data record"), std::string::npos) << relays;
  const std::string log = run_output(r, "h2", 2).get<std::string>();
  EXPECT_NE(log.find("a TLS record failed its integrity check"), std::string::npos) << log;
}

}  // namespace
}  // namespace rdmacheck::labtest
