// The connection layer on the real stack: serve on h1, ping from h2. Every
// ping that needs only a healthy pair shares one boot (lab_harness.h, Boot);
// the faults each get their own.
#include <gtest/gtest.h>

#include "lab/lab_harness.h"

namespace rdmacheck::labtest {
namespace {

std::vector<std::string> step_names(const nlohmann::json& steps) {
  std::vector<std::string> names;
  for (const auto& s : steps) names.push_back(s["name"]);
  return names;
}

// The default RC ping: five pings and the size ladder, both QPs through
// RESET -> INIT -> RTR -> RTS.
void expect_healthy_rc(const LabRun& r, const Boot::Part& part) {
  EXPECT_EQ(part.exit(r, "h2"), 0) << r.console;
  const auto& ping = part.out(r, "h2");
  ASSERT_TRUE(ping.is_object()) << r.console;
  EXPECT_EQ(ping["ok"], true);
  EXPECT_EQ(ping["summary"]["sent"], 5);
  EXPECT_EQ(ping["summary"]["received"], 5);
  EXPECT_GT(ping["summary"]["min_us"].get<double>(), 0);
  EXPECT_EQ(ping["peer"]["hostname"], "h1");
  EXPECT_EQ(ping["local"]["gid_type"], "RoCE v2");
  for (const char* side : {"local", "peer"}) {
    EXPECT_EQ(step_names(ping["timeline"][side]), (std::vector<std::string>{"INIT", "RTR", "RTS"}))
        << side;
  }
  // The size ladder crossed the path MTU (1024) with multi-packet messages.
  ASSERT_FALSE(ping["ladder"].empty());
  EXPECT_EQ(ping["ladder"].back()["size"], 8192);
  for (const auto& l : ping["ladder"]) EXPECT_EQ(l["ok"], true) << l.dump();
  EXPECT_TRUE(ping["findings"].empty()) << ping["findings"].dump(2);
}

// UD and RDMA-write ping-pongs.
void expect_ud_and_write(const LabRun& r, const Boot::Part& part) {
  EXPECT_EQ(part.exit(r, "h2", 0), 0) << r.console;
  EXPECT_EQ(part.exit(r, "h2", 1), 0) << r.console;
  const auto& ud = part.out(r, "h2", 0);
  ASSERT_TRUE(ud.is_object()) << r.console;
  EXPECT_EQ(ud["transport"], "ud");
  EXPECT_EQ(ud["summary"]["received"], 3);
  // A UD message is at most one MTU: the ladder stops there.
  EXPECT_EQ(ud["ladder"].back()["size"], 1024);
  const auto& wr = part.out(r, "h2", 1);
  ASSERT_TRUE(wr.is_object()) << r.console;
  EXPECT_EQ(wr["op"], "write");
  EXPECT_EQ(wr["summary"]["received"], 3);
  EXPECT_EQ(wr["ladder"].back()["size"], 8192);
  EXPECT_EQ(wr["ladder"].back()["ok"], true);
}

// The server's log after every session: the write echoes landed through MRs
// registered at a random IOVA (a device that ignored it would have failed
// them): rxe took ibv_reg_mr_iova, so the server noted no fallback to the
// virtual address. The UD ping's Q_Keys, random on both sides, went through
// the handshake.
void expect_serve_log(const LabRun& r, const Boot::Part& part) {
  const auto& out = part.out(r, "h2");
  ASSERT_TRUE(out.is_string()) << r.console;
  const std::string log = out.get<std::string>();
  EXPECT_NE(log.find("start: ping rc/write"), std::string::npos) << log;
  EXPECT_NE(log.find("start: ping ud/send"), std::string::npos) << log;
  EXPECT_EQ(log.find("at its virtual address"), std::string::npos) << log;
}

void expect_link_local_warned(const LabRun& r, const Boot::Part& part) {
  const auto& p = part.out(r, "h2");
  ASSERT_TRUE(p.is_object()) << r.console;
  EXPECT_EQ(p["local"]["gid_index"], 0);
  ASSERT_FALSE(p["warnings"].empty()) << p.dump(2);
  EXPECT_NE(p["warnings"][0].get<std::string>().find("link-local"), std::string::npos);
  EXPECT_GE(part.exit(r, "h2"), 1);  // a warning at least, whatever the transfer did
}

// -T/--tclass and -S/--sl: the traffic class reaches both hosts' QPs (read
// back from the device with ibv_query_qp after RTR) for ping, bw and lat. rxe
// keeps no service level (RoCE carries none on the wire; the kernel's
// rxe_av_from_attr copies only the GRH), which is read back as 0 and said in
// a warning. Without -T/-S both QPs keep class 0, level 0.
void expect_priority(const LabRun& r, const Boot::Part& part) {
  for (size_t n = 0; n < 3; ++n) {
    const auto& out = part.out(r, "h2", n);
    ASSERT_TRUE(out.is_object()) << r.console;
    EXPECT_NE(part.exit(r, "h2", n), 2) << out.dump(2);
    for (const char* side : {"local", "peer"}) {
      ASSERT_TRUE(out[side].is_object()) << n << " " << out.dump(2);
      EXPECT_EQ(out[side]["traffic_class"], 106) << n << " " << side;
      EXPECT_EQ(out[side]["sl"], 0) << n << " " << side;  // what rxe reports: see above
    }
    bool said = false;
    for (const auto& w : out["warnings"]) {
      said = said || w.get<std::string>().find("RoCE carries no SL") != std::string::npos;
    }
    EXPECT_TRUE(said) << out["warnings"].dump();
  }
  const auto& plain = part.out(r, "h2", 3);
  ASSERT_TRUE(plain.is_object()) << r.console;
  for (const char* side : {"local", "peer"}) {
    EXPECT_EQ(plain[side]["traffic_class"], 0) << side;
    EXPECT_EQ(plain[side]["sl"], 0) << side;
  }
}

// --cm: the connection through librdmacm.
void expect_cm(const LabRun& r, const Boot::Part& part) {
  EXPECT_EQ(part.exit(r, "h2"), 0) << r.console;
  const auto& p = part.out(r, "h2");
  ASSERT_TRUE(p.is_object()) << r.console;
  EXPECT_EQ(p["summary"]["received"], 3);
  EXPECT_EQ(step_names(p["timeline"]["local"]),
            (std::vector<std::string>{"ADDR_RESOLVED", "ROUTE_RESOLVED", "ESTABLISHED", "RTS"}));
  EXPECT_EQ(step_names(p["timeline"]["peer"]),
            (std::vector<std::string>{"CONNECT_REQUEST", "ESTABLISHED", "RTS"}));
  for (const auto& s : p["timeline"]["local"]) EXPECT_EQ(s["ok"], true);
}

void expect_unreachable(const LabRun& r, const Boot::Part& part) {
  EXPECT_EQ(part.exit(r, "h2"), 2) << r.console;
  const auto& p = part.out(r, "h2");
  ASSERT_TRUE(p.is_object()) << r.console;
  EXPECT_EQ(finding_ids(p["findings"]), std::vector<std::string>{"peer-unreachable"});
  EXPECT_LE(p["elapsed_ms"].get<double>(), 20000);  // ping's default --timeout
}

void expect_memlock(const LabRun& r, const Boot::Part& part) {
  EXPECT_EQ(part.exit(r, "h2"), 2) << r.console;
  const auto& p = part.out(r, "h2");
  ASSERT_TRUE(p.is_object()) << r.console;
  EXPECT_EQ(p["failed_stage"], "local setup") << p.dump(2);
  EXPECT_EQ(finding_ids(p["findings"]), std::vector<std::string>{"memlock-too-low"});
}

// While an RC ping session runs, qps shows its QP in RTS with our PID and
// command, connected to a remote QPN, next to the kernel's GSI QP; afterwards
// neither side keeps a QP of ours (the server still runs).
void expect_qps(const LabRun& r, const Boot::Part& part) {
  EXPECT_EQ(part.exit(r, "h2", 0), 0) << r.console;
  const auto& doc = part.out(r, "h2");
  ASSERT_TRUE(doc.is_object()) << r.console;
  EXPECT_EQ(printed_violations(doc, "qps.schema.json"), std::vector<std::string>{});
  EXPECT_TRUE(doc["error"].is_null());
  bool gsi = false;
  bool ours = false;
  for (const auto& q : doc["qps"]) {
    EXPECT_EQ(q["device"], "rxe0");
    if (q["type"] == "GSI") {
      gsi = true;
      EXPECT_EQ(q["lqpn"], 1);
      EXPECT_EQ(q["kernel"], true);
      EXPECT_EQ(q["state"], "RTS");
    }
    if (q["type"] == "RC" && q["comm"] == "rdmacheck") {
      ours = true;
      EXPECT_EQ(q["state"], "RTS") << q.dump();
      EXPECT_EQ(q["port"], 1);
      EXPECT_TRUE(q["pid"].is_number());
      EXPECT_TRUE(q["rqpn"].is_number());
    }
  }
  EXPECT_TRUE(gsi) << doc.dump(2);
  EXPECT_TRUE(ours) << doc.dump(2);
  EXPECT_TRUE(doc["findings"].empty()) << doc["findings"].dump(2);
  for (const auto& [host, n] : {std::pair<std::string, size_t>{"h2", 1}, {"h1", 0}}) {
    const auto& after = part.out(r, host, n);
    ASSERT_TRUE(after.is_object()) << host << r.console;
    for (const auto& q : after["qps"]) {
      EXPECT_NE(q.value("comm", ""), "rdmacheck") << host << " kept " << q.dump();
    }
  }
}

// A UD datagram with a Q_Key the server never gave out (a guessing or
// replaying sender's, --forge-qkey): the server's QP drops it (rxe checks the
// DETH Q_Key against the QP's), so no ping is answered and the server's
// session received nothing.
void expect_qkey_dropped(const LabRun& r, const Boot::Part& part) {
  EXPECT_EQ(part.exit(r, "h2", 0), 2) << r.console;
  const auto& p = part.out(r, "h2", 0);
  ASSERT_TRUE(p.is_object()) << r.console;
  EXPECT_EQ(p["transport"], "ud");
  EXPECT_EQ(p["summary"]["received"], 0) << p.dump(2);
  EXPECT_GT(p["summary"]["sent"].get<int>(), 0) << p.dump(2);
  const auto& log = part.out(r, "h2", 1);
  ASSERT_TRUE(log.is_string()) << r.console;
  // The forged session is the server log's last UD session.
  const std::string l = log.get<std::string>();
  const auto start = l.rfind("start: ping ud/send");
  ASSERT_NE(start, std::string::npos) << l;
  const auto id_at = l.rfind("session ", start);
  const std::string id = l.substr(id_at, l.find(' ', id_at + 8) - id_at);
  const auto end = l.find(id + " ", start);
  ASSERT_NE(end, std::string::npos) << l;
  const std::string end_line = l.substr(end, l.find('\n', end) - end);
  EXPECT_NE(end_line.find("(0 received, 0 replied"), std::string::npos) << end_line;
}

// serve --max-pinned 1 (MiB): a bw whose buffer (both halves of 1 MiB) is
// over the whole budget is refused before the server pins anything, with the
// budget named and no "try later"; a 64 KiB bw still runs. The server's
// pinned memory (VmPin, sampled while both ran) stayed within the budget.
void expect_pinned_budget(const LabRun& r, const Boot::Part& part) {
  const auto& big = part.out(r, "h2", 0);
  ASSERT_TRUE(big.is_object()) << r.console;
  EXPECT_EQ(part.exit(r, "h2", 0), 2) << big.dump(2);
  ASSERT_FALSE(big["findings"].empty()) << big.dump(2);
  EXPECT_EQ(big["findings"][0]["id"], "server-refused") << big["findings"].dump(2);
  EXPECT_NE(big["findings"][0]["summary"].get<std::string>().find(
                "over this server's whole pinned-memory budget (1024 KiB, serve --max-pinned)"),
            std::string::npos)
      << big["findings"].dump(2);
  EXPECT_EQ(part.exit(r, "h2", 1), 0) << part.out(r, "h2", 1).dump(2);
  const auto& pinned = part.out(r, "h1", 0);
  ASSERT_TRUE(pinned.is_number()) << pinned.dump() << r.console;
  EXPECT_LE(pinned.get<int64_t>(), 1024);
}

TEST(PingLab, OneHealthyPairEveryKindOfPing) {
  Boot b;
  const auto rc = b.add({"h2:rdmacheck ping h1 --json"});
  const auto ud_write =
      b.add({"h2:rdmacheck ping h1 --ud -n 3 --json", "h2:rdmacheck ping h1 --write -n 3 --json"});
  const auto link_local = b.add({"h2:rdmacheck ping h1 -x 0 -n 1 --no-ladder --json"});
  const auto priority = b.add({"h2:rdmacheck ping h1 -T 106 -S 3 -n 2 --no-ladder --json",
                               "h2:rdmacheck bw h1 --tclass 106 --sl 3 -n 200 --json",
                               "h2:rdmacheck lat h1 --tclass 106 -S 3 -n 100 --json",
                               "h2:rdmacheck ping h1 -n 1 --no-ladder --json"});
  const auto cm = b.add({"h2:rdmacheck ping h1 --cm -n 3 --json"});
  const auto unreachable = b.add({"h2:rdmacheck ping 198.18.0.99 --json"});
  const auto qkey =
      b.add({"h2:rdmacheck ping h1 --ud -n 3 --no-ladder --forge-qkey 305419896 "
             "--timeout 8 --json",
             "h2:cat /run/lab/h1/serve.log"});
  // A second server with a 1 MiB budget; h1 samples its VmPin until h2's two bw are done.
  const std::string pinned_done = "/run/lab/h2/rc." + std::to_string(b.next("h2") + 2);
  const auto pinned = b.add(
      {"h1:rdmacheck serve --psk-file $RDMACHECK_PSK_FILE --max-pinned 1 --port 18700 "
       "> /run/lab/h1/serve-18700.log 2>&1 & pid=$!; "
       "for i in $(seq 300); do grep -q listening /run/lab/h1/serve-18700.log && break; sleep "
       "0.1; done; touch /run/lab/h1/pinned-up; max=0; until [ -e " +
           pinned_done +
           " ]; do v=$(awk '/VmPin/ {print $2}' /proc/$pid/status); [ \"$v\" -gt $max ] && "
           "max=$v; sleep 0.05; done; echo $max",
       "h2:while [ ! -e /run/lab/h1/pinned-up ]; do sleep 0.1; done; rdmacheck bw h1 -p 18700 "
       "-s 1M -n 10 --json",
       "h2:rdmacheck bw h1 -p 18700 -s 64K -n 100 --json"});
  // Root ignores RLIMIT_MEMLOCK through CAP_IPC_LOCK: drop it, as an ordinary user is.
  const auto memlock =
      b.add({"h2:capsh --drop=cap_ipc_lock -- -c 'ulimit -l 8; rdmacheck ping h1 "
             "-s 1000000 --json'"});
  // Last of h2's sessions: h1's qps runs once h2's second qps is done (its rc
  // file), when no session of this boot may hold a QP on the server any more.
  const std::string h2_after = "/run/lab/h2/rc." + std::to_string(b.next("h2") + 2);
  const auto qps =
      // qps once the ping's QP is up (polled, bounded), not after a guessed sleep.
      b.add({"h2:rdmacheck ping h1 -n 40 --interval 0.2 --timeout 60 --no-ladder > /dev/null & "
             "for i in $(seq 100); do rdmacheck qps --json > /tmp/qps.json; jq -e '[.qps[] | "
             "select(.type == \"RC\" and .comm == \"rdmacheck\" and .state == \"RTS\")] | "
             "length > 0' /tmp/qps.json > /dev/null && break; sleep 0.1; done; cat /tmp/qps.json; "
             "wait",
             "h2:rdmacheck qps --json",
             "h1:while [ ! -e " + h2_after + " ]; do sleep 0.2; done; rdmacheck qps --json"});
  const auto log = b.add({"h2:cat /run/lab/h1/serve.log"});
  const auto r = run_lab(b.args());
  ASSERT_TRUE(r.doc.is_object()) << r.console;
  expect_parts(r, {{"healthy RC ping", rc, expect_healthy_rc},
                   {"UD and write ping-pongs", ud_write, expect_ud_and_write},
                   {"-x 0: a forced link-local GID", link_local, expect_link_local_warned},
                   {"-T/-S", priority, expect_priority},
                   {"--cm", cm, expect_cm},
                   {"an unreachable address", unreachable, expect_unreachable},
                   {"a forged Q_Key", qkey, expect_qkey_dropped},
                   {"the pinned-memory budget", pinned, expect_pinned_budget},
                   {"memlock", memlock, expect_memlock},
                   {"qps", qps, expect_qps},
                   {"the server's log", log, expect_serve_log}});
}

}  // namespace
}  // namespace rdmacheck::labtest
