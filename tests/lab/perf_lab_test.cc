// The performance layer on the real stack: bw and lat against `rdmacheck
// serve` between two Soft-RoCE guests (the healthy runs share two boots:
// lab_harness.h, Boot), perftest's flags, and RoCE's loss collapse named from
// the port counters. Emulated figures are tiny; only their sanity and ratios
// measured in one run are asserted.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>

#include "lab/lab_harness.h"
#include "testing/schema_check.h"

namespace rdmacheck::labtest {
namespace {

// Every document bw and lat printed in the lab conforms to the checked-in schema.
void expect_schema(const nlohmann::json& d) {
  static const nlohmann::json schema = [] {
    std::ifstream in(RDMACHECK_SCHEMAS "/perf.schema.json");
    return nlohmann::json::parse(in);
  }();
  EXPECT_EQ(perf::schema_violations(schema, d), std::vector<std::string>{}) << d.dump(2);
}

bool has(const std::vector<std::string>& ids, const char* id) {
  return std::find(ids.begin(), ids.end(), id) != ids.end();
}

// --validate ran checks on both hosts and every one found the data intact.
void expect_validated(const nlohmann::json& d) {
  ASSERT_TRUE(d["validation"].is_object()) << d.dump(2);
  EXPECT_GT(d["validation"]["checks"].get<uint64_t>(), 0u) << d.dump(2);
  EXPECT_EQ(d["validation"]["errors"].size(), 0u) << d.dump(2);
  const auto ids = finding_ids(d["findings"]);
  EXPECT_TRUE(has(ids, "data-validated")) << d.dump(2);
  EXPECT_FALSE(has(ids, "data-validation-failed")) << d.dump(2);
}

// -b: both directions moved data and the figures are their sum.
void expect_bidirectional(const nlohmann::json& d) {
  EXPECT_EQ(d["ok"], true) << d.dump(2);
  EXPECT_EQ(d["spec"]["bidirectional"], true);
  ASSERT_FALSE(d["results"].empty()) << d.dump(2);
  for (const auto& x : d["results"]) {
    ASSERT_TRUE(x.contains("directions")) << x.dump(2);
    const double out = x["directions"]["out_gbps"].get<double>();
    const double in = x["directions"]["in_gbps"].get<double>();
    EXPECT_GT(out, 0);
    EXPECT_GT(in, 0);
    EXPECT_NEAR(x["avg_gbps"].get<double>(), out + in, 1e-9);
    EXPECT_TRUE(x["intervals"].is_null()) << "this side's intervals are one direction of the sum";
  }
  expect_schema(d);
}

void expect_sane_bw(const nlohmann::json& d, const std::string& op, size_t sizes) {
  ASSERT_TRUE(d.is_object());
  expect_schema(d);
  EXPECT_EQ(d["ok"], true) << d.dump(2);
  EXPECT_EQ(d["spec"]["op"], op);
  ASSERT_EQ(d["results"].size(), sizes) << d.dump(2);
  for (const auto& x : d["results"]) {
    EXPECT_GT(x["messages"].get<uint64_t>(), 0u);
    EXPECT_GT(x["avg_gbps"].get<double>(), 0);
    EXPECT_LT(x["avg_gbps"].get<double>(), 100);  // an emulated NIC is not faster than hardware
    EXPECT_GE(x["peak_gbps"].get<double>(), x["avg_gbps"].get<double>());
    // Its spread, where the run was long enough to cut (a -n 100 of 2 B may not be).
    if (const auto& i = x["intervals"]; i.is_object()) {
      EXPECT_GE(i["count"].get<int>(), 1) << i.dump();
      EXPECT_LE(i["count"].get<int>(), 10) << i.dump();
      EXPECT_EQ(i["gbps"].size(), i["count"].get<size_t>()) << i.dump();
      EXPECT_LE(i["min_gbps"].get<double>(), i["median_gbps"].get<double>()) << i.dump();
      EXPECT_LE(i["median_gbps"].get<double>(), i["p99_gbps"].get<double>()) << i.dump();
    }
  }
  // The verdict admits it has no line rate to hold rxe to, and a healthy wire
  // (the lab's hub buffers frames like a switch) shows no loss.
  const auto ids = finding_ids(d["findings"]);
  EXPECT_NE(std::find(ids.begin(), ids.end(), "no-line-rate-reference"), ids.end());
  EXPECT_EQ(std::find(ids.begin(), ids.end(), "packet-loss-during-test"), ids.end()) << d.dump(2);
  for (const auto& f : d["findings"]) EXPECT_NE(f["severity"], "fail") << f.dump(2);
}

// bw: write, read and send; the server counted every send, and --cpu-util
// measured both sides (the client busy-polls; the server's sink sleeps
// between bursts). With -e the client sleeps on its completion channel; the
// CPU that saves is a performance figure, measured in bench/perf, not here.
void expect_basic_bw(const LabRun& r, const Boot::Part& part) {
  for (size_t n = 0; n < 4; ++n) EXPECT_EQ(part.exit(r, "h2", n), 0) << n << r.console;
  for (size_t n = 4; n < 6; ++n) EXPECT_LE(part.exit(r, "h2", n), 1) << n << r.console;
  expect_sane_bw(part.out(r, "h2", 0), "write", 1);
  expect_sane_bw(part.out(r, "h2", 1), "read", 1);
  expect_sane_bw(part.out(r, "h2", 2), "send", 1);
  const auto& send = part.out(r, "h2", 2);
  ASSERT_TRUE(send.is_object()) << r.console;
  EXPECT_GE(send["counters"]["peer"]["hw_counters/rcvd_pkts"].get<uint64_t>(), 300u * 4);
  ASSERT_TRUE(send["cpu"].is_object()) << send.dump(2);
  EXPECT_GT(send["cpu"]["local"]["percent"].get<double>(), 30) << send["cpu"].dump();
  EXPECT_GT(send["cpu"]["local"]["wall_s"].get<double>(), 0);
  ASSERT_TRUE(send["cpu"]["peer"].is_object()) << send["cpu"].dump();
  EXPECT_GT(send["cpu"]["peer"]["wall_s"].get<double>(), 0);
  EXPECT_EQ(send["spec"]["events"], false);
  const auto& slept = part.out(r, "h2", 3);
  expect_sane_bw(slept, "send", 1);
  ASSERT_TRUE(slept.is_object()) << r.console;
  EXPECT_EQ(slept["spec"]["events"], true);
  EXPECT_GE(slept["counters"]["peer"]["hw_counters/rcvd_pkts"].get<uint64_t>(), 300u * 4);
  // Its CPU is measured and reported; how much less than polling it is, is a
  // figure for bench/perf (bw_e_write_64k's CPU column), never a bound here:
  // a 0.2-s run on a loaded CI host once used 64 % against polling's 87 %.
  ASSERT_TRUE(slept["cpu"].is_object()) << slept.dump(2);
  EXPECT_GT(slept["cpu"]["local"]["wall_s"].get<double>(), 0);
  // Several QPs and both directions, every byte checked; and -D's clock
  // wakes a client that sleeps.
  expect_bidirectional(part.out(r, "h2", 4));
  expect_validated(part.out(r, "h2", 4));
  EXPECT_EQ(part.out(r, "h2", 4)["spec"]["qps"], 2);
  const auto& timed = part.out(r, "h2", 5);
  expect_sane_bw(timed, "write", 1);
  ASSERT_TRUE(timed.is_object()) << r.console;
  EXPECT_NEAR(timed["results"][0]["seconds"].get<double>(), 1.0, 0.3) << timed.dump(2);
}

// Several sizes, QPs, ops and transports. A shallow queue (-t 16): the
// emulated wire drops frames when flooded, and rxe answers heavy go-back-N of
// 64 KiB writes with "remote invalid request".
const std::vector<std::string> kSeveralRuns = {
    "h2:rdmacheck bw h1 -n 100 -s 2,1024,16384 -q 2 -t 16 --json",
    "h2:rdmacheck bw h1 --op write_imm -n 200 -s 4096 -t 16 -Q 8 -l 4 --json",
    "h2:rdmacheck bw h1 --op atomic_fadd -n 200 --json",
    "h2:rdmacheck bw h1 -c UC -n 200 -s 4096 -t 16 --json",
    "h2:rdmacheck bw h1 -c UD --op send -n 200 -s 512 -t 16 --json"};

void expect_several(const LabRun& r, const Boot::Part& part) {
  for (size_t n = 0; n < kSeveralRuns.size(); ++n) EXPECT_LE(part.exit(r, "h2", n), 1) << n;
  const auto& multi = part.out(r, "h2", 0);
  expect_sane_bw(multi, "write", 3);
  if (!multi.is_object() || multi["results"].size() != 3) return;
  // Two QPs of 100 messages each.
  EXPECT_EQ(multi["results"][0]["messages"], 200);
  // Bigger messages move more bytes per second than 2-byte ones, even emulated.
  EXPECT_GT(multi["results"][2]["avg_gbps"].get<double>(),
            multi["results"][0]["avg_gbps"].get<double>());
  expect_sane_bw(part.out(r, "h2", 1), "write_imm", 1);
  expect_sane_bw(part.out(r, "h2", 2), "atomic_fadd", 1);
  expect_sane_bw(part.out(r, "h2", 3), "write", 1);
  EXPECT_EQ(part.out(r, "h2", 3)["spec"]["transport"], "uc");
  expect_sane_bw(part.out(r, "h2", 4), "send", 1);
  EXPECT_EQ(part.out(r, "h2", 4)["spec"]["transport"], "ud");
}

const std::vector<std::string> kBidirRuns = {
    "h2:rdmacheck bw h1 -b -n 300 -s 4096 --json",
    "h2:rdmacheck bw h1 --validate -n 200 -s 2,4096 --json",
    "h2:rdmacheck bw h1 -b --op send --validate -n 300 -s 4096 -t 16 --json",
    "h2:rdmacheck bw h1 -b --op read --validate -n 200 -s 4096 --json",
    "h2:rdmacheck bw h1 --op atomic_cswap --validate -n 200 --json",
    "h2:rdmacheck bw h1 -b --op atomic_fadd --validate -n 200 -q 2 --json",
    "h2:rdmacheck bw h1 -b --op send -D 1 -q 2 -s 1024 --json"};

void expect_bidir_and_validated(const LabRun& r, const Boot::Part& part) {
  for (size_t n = 0; n < kBidirRuns.size(); ++n) EXPECT_LE(part.exit(r, "h2", n), 1) << n;
  const auto& write = part.out(r, "h2", 0);
  expect_bidirectional(write);
  EXPECT_EQ(write["results"][0]["messages"], 600);  // 300 each way
  EXPECT_TRUE(write["validation"].is_null());
  // The server's receive counter saw the client's 300 sends and its own 300 went out.
  const auto& send = part.out(r, "h2", 2);
  expect_bidirectional(send);
  expect_validated(send);
  if (send.is_object()) {
    EXPECT_GE(send["counters"]["peer"]["hw_counters/rdma_recvs"].get<uint64_t>(), 300u);
    EXPECT_GE(send["counters"]["local"]["hw_counters/rdma_recvs"].get<uint64_t>(), 300u);
  }
  const auto& uni = part.out(r, "h2", 1);
  expect_sane_bw(uni, "write", 2);
  expect_validated(uni);
  EXPECT_EQ(uni["validation"]["checks"], 2);  // the server checked each size
  expect_bidirectional(part.out(r, "h2", 3));
  expect_validated(part.out(r, "h2", 3));
  expect_sane_bw(part.out(r, "h2", 4), "atomic_cswap", 1);
  expect_validated(part.out(r, "h2", 4));
  const auto& fadd = part.out(r, "h2", 5);
  expect_bidirectional(fadd);
  expect_validated(fadd);
  EXPECT_EQ(fadd["validation"]["checks"], 4);  // both hosts counted both QPs' atomics
  const auto& timed = part.out(r, "h2", 6);
  expect_bidirectional(timed);
  EXPECT_EQ(timed["spec"]["qps"], 2);
}

bool has_warning(const nlohmann::json& out, const std::string& text) {
  for (const auto& w : out["warnings"]) {
    if (w.get<std::string>().find(text) != std::string::npos) return true;
  }
  return false;
}

// perftest's -m, -u, --output and lat -D: the path MTU reaches both hosts'
// QPs (read back with ibv_query_qp after RTR), a larger -m than the ports
// carry is lowered with a warning, --output prints one number, and lat -D
// runs several sizes (the server's write ping-pong follows at each barrier);
// --run_infinitely ends cleanly, counted, at SIGINT.
const std::vector<std::string> kPerftestFlagRuns = {
    "h2:rdmacheck bw h1 -m 512 -u 18 -n 200 --json", "h2:rdmacheck bw h1 -m 4096 -n 200 --json",
    "h2:rdmacheck bw h1 -n 200 --output bandwidth", "h2:rdmacheck lat h1 -D 1 -s 2,64 --json",
    // Ctrl-C once the first live line is out (on stderr: --json owns stdout).
    "h2:rdmacheck bw h1 --run_infinitely -D 0.5 --json 2>/tmp/live & "
    "until grep -q Gb/s /tmp/live; do sleep 0.1; done; kill -INT $!; wait $!"};

void expect_perftest_flags(const LabRun& r, const Boot::Part& part) {
  // -m 512: both QPs carry 512, and the verdict's MTU is the QP's.
  const auto& small = part.out(r, "h2", 0);
  ASSERT_TRUE(small.is_object()) << r.console;
  EXPECT_NE(part.exit(r, "h2", 0), 2) << small.dump(2);
  for (const char* side : {"local", "peer"}) EXPECT_EQ(small[side]["path_mtu_bytes"], 512) << side;
  EXPECT_EQ(small["link"]["mtu_bytes"], 512);
  EXPECT_EQ(small["spec"]["path_mtu_bytes"], 512);
  EXPECT_EQ(small["spec"]["ack_timeout"], 18);
  // -m 4096 over rxe on a 1500-byte netdev: the active MTU (1024) wins, and it is said.
  const auto& big = part.out(r, "h2", 1);
  ASSERT_TRUE(big.is_object()) << r.console;
  const int active = big["local"]["active_mtu_bytes"].get<int>();
  EXPECT_LT(active, 4096);
  for (const char* side : {"local", "peer"}) EXPECT_EQ(big[side]["path_mtu_bytes"], active) << side;
  EXPECT_TRUE(has_warning(big, "-m 4096: the path MTU is")) << big["warnings"].dump();
  // --output bandwidth: stdout is one number, perftest's MiB/s.
  const auto& figure = part.out(r, "h2", 2);
  EXPECT_EQ(part.exit(r, "h2", 2), 0) << r.console;
  ASSERT_TRUE(figure.is_number()) << figure.dump();
  EXPECT_GT(figure.get<double>(), 0);
  // lat -D 1 over two sizes: round trips in both, none refused.
  const auto& lat = part.out(r, "h2", 3);
  ASSERT_TRUE(lat.is_object()) << r.console;
  EXPECT_NE(part.exit(r, "h2", 3), 2) << lat.dump(2);
  ASSERT_EQ(lat["results"].size(), 2u) << lat.dump(2);
  for (const auto& x : lat["results"]) EXPECT_GT(x["round_trips"].get<int>(), 0) << x.dump();
  EXPECT_EQ(lat["spec"]["iterations"], 0);
  // --run_infinitely stopped by SIGINT: a clean report of the whole run, counted.
  const auto& forever = part.out(r, "h2", 4);
  ASSERT_TRUE(forever.is_object()) << r.console;
  EXPECT_NE(part.exit(r, "h2", 4), 2) << forever.dump(2);
  EXPECT_EQ(forever["ok"], true) << forever.dump(2);
  EXPECT_EQ(forever["spec"]["run_infinitely"], true);
  ASSERT_EQ(forever["results"].size(), 1u) << forever.dump(2);
  EXPECT_GT(forever["results"][0]["messages"].get<int64_t>(), 0);
  EXPECT_GE(forever["results"][0]["seconds"].get<double>(), 0.5);
}

// A script written for `ib_write_bw ... --output bandwidth` reads the same
// number, in perftest's unit (MiB/s), from rdmacheck: side by side with
// Debian's perftest on the same pair, within a factor of 3 (emulation is
// noisy); with --report_gbits both print Gb/s.
constexpr const char* kOutputSize = "-s 65536 -n 2000 --output bandwidth";
std::vector<std::string> output_bandwidth_runs() {
  const std::string size = kOutputSize;
  return {"h1:(ib_write_bw " + size + " >/tmp/perftest-server.out 2>&1 &)",
          // perftest's client does not retry: try until the server listens.
          "h2:for i in $(seq 60); do ib_write_bw h1 " + size +
              " 2>/dev/null && exit 0; sleep 0.5; done; exit 1",
          "h2:rdmacheck bw h1 " + size, "h2:rdmacheck bw h1 " + size + " --report_gbits"};
}

void expect_output_bandwidth(const LabRun& r, const Boot::Part& part) {
  ASSERT_EQ(part.exit(r, "h2", 0), 0) << r.console;
  const auto& perftest = part.out(r, "h2", 0);
  const auto& mib = part.out(r, "h2", 1);
  const auto& gbits = part.out(r, "h2", 2);
  ASSERT_TRUE(perftest.is_number()) << perftest.dump() << r.console;
  ASSERT_TRUE(mib.is_number()) << mib.dump() << r.console;
  ASSERT_TRUE(gbits.is_number()) << gbits.dump() << r.console;
  const double p = perftest.get<double>();
  const double m = mib.get<double>();
  const double g_as_mib = gbits.get<double>() * 1e9 / 8 / (1 << 20);
  ASSERT_GT(p, 0);
  EXPECT_GT(m, p / 3) << "perftest " << p << " MiB/s, rdmacheck " << m;
  EXPECT_LT(m, p * 3) << "perftest " << p << " MiB/s, rdmacheck " << m;
  EXPECT_GT(g_as_mib, m / 3) << gbits.get<double>() << " Gb/s against " << m << " MiB/s";
  EXPECT_LT(g_as_mib, m * 3) << gbits.get<double>() << " Gb/s against " << m << " MiB/s";
}

// Every bandwidth test that needs only a healthy pair, in one boot.
TEST(PerfLab, BandwidthOfEveryOpTransportAndPerftestFlagInOneBoot) {
  Boot b;
  const auto basic = b.add({"h2:rdmacheck bw h1 -n 300 -s 4096 --json",
                            "h2:rdmacheck bw h1 --op read -n 300 -s 4096 --json",
                            "h2:rdmacheck bw h1 --op send -n 300 -s 4096 --cpu-util --json",
                            "h2:rdmacheck bw h1 -e --op send -n 300 -s 4096 --cpu-util --json",
                            "h2:rdmacheck bw h1 -e -q 2 -b --op send --validate -n 300 -s 4096 "
                            "-t 16 --json",
                            "h2:rdmacheck bw h1 -e -D 1 --json"});
  const auto several = b.add(kSeveralRuns);
  const auto bidir = b.add(kBidirRuns);
  const auto flags = b.add(kPerftestFlagRuns);
  const auto output = b.add(output_bandwidth_runs());
  const auto r = run_lab(b.args());
  ASSERT_TRUE(r.doc.is_object()) << r.console;
  expect_parts(r, {{"write, read, send", basic, expect_basic_bw},
                   {"sizes, QPs, ops, transports", several, expect_several},
                   {"-b and --validate", bidir, expect_bidir_and_validated},
                   {"perftest's flags", flags, expect_perftest_flags},
                   {"--output bandwidth beside perftest's", output, expect_output_bandwidth}});
}

void expect_basic_lat(const LabRun& r, const Boot::Part& part) {
  for (size_t i = 0; i < 3; ++i) {
    const auto& d = part.out(r, "h2", i);
    ASSERT_TRUE(d.is_object()) << r.console;
    EXPECT_LE(part.exit(r, "h2", i), 1) << i;
    expect_schema(d);
    EXPECT_EQ(d["ok"], true) << d.dump(2);
    for (const auto& x : d["results"]) {
      EXPECT_EQ(x["round_trips"], 100);
      EXPECT_GT(x["min_us"].get<double>(), 0);
      EXPECT_LE(x["min_us"].get<double>(), x["median_us"].get<double>());
      EXPECT_LE(x["median_us"].get<double>(), x["p99_us"].get<double>());
      EXPECT_LE(x["p99_us"].get<double>(), x["max_us"].get<double>());
    }
  }
  EXPECT_EQ(part.out(r, "h2", 0)["results"][0]["measure"], "half_round_trip");
  EXPECT_EQ(part.out(r, "h2", 1)["results"].size(), 2u);
  const auto& read = part.out(r, "h2", 2)["results"][0];
  EXPECT_EQ(read["measure"], "round_trip");
  uint64_t in_buckets = 0;
  for (const auto& b : read["histogram"]) in_buckets += b["count"].get<uint64_t>();
  EXPECT_EQ(in_buckets, 100u);
}

const std::vector<std::string> kEveryTransportRuns = {
    "h2:rdmacheck lat h1 --validate -n 50 -s 2,64 --json",
    "h2:rdmacheck lat h1 --op atomic_cswap --validate -n 50 --json",
    "h2:rdmacheck lat h1 --op atomic_fadd --validate -n 50 --json",
    "h2:rdmacheck lat h1 -c UD --op send --validate -n 50 -s 512 --json",
    "h2:rdmacheck lat h1 -c UC --validate -n 50 -s 64 --json",
    "h2:rdmacheck bw h1 --cm -n 200 -s 4096 --json",
    "h2:rdmacheck bw h1 -R -b --op write_imm --validate -n 200 -s 1024 --json",
    "h2:rdmacheck lat h1 --cm --op send -n 50 --json",
    // On a terminal (script gives it one) a run over a second shows progress.
    "h2:script -qec 'rdmacheck bw h1 -D 2 -s 4096' /dev/null"};

void expect_every_transport(const LabRun& r, const Boot::Part& part) {
  for (size_t i = 0; i < 8; ++i) {
    const auto& d = part.out(r, "h2", i);
    ASSERT_TRUE(d.is_object()) << r.console;
    EXPECT_LE(part.exit(r, "h2", i), 1) << i;
    EXPECT_EQ(d["ok"], true) << d.dump(2);
    expect_schema(d);
    if (i < 5 || i == 6) expect_validated(d);
  }
  // Both hosts checked both sizes of the write ping-pong.
  EXPECT_EQ(part.out(r, "h2", 0)["validation"]["checks"], 4);
  // Atomics wait for the fetched value: a full round trip.
  EXPECT_EQ(part.out(r, "h2", 1)["results"][0]["measure"], "round_trip");
  EXPECT_EQ(part.out(r, "h2", 2)["results"][0]["round_trips"], 50);
  EXPECT_EQ(part.out(r, "h2", 3)["spec"]["transport"], "ud");
  EXPECT_EQ(part.out(r, "h2", 4)["spec"]["transport"], "uc");
  const auto& cm = part.out(r, "h2", 5);
  EXPECT_EQ(cm["spec"]["cm"], true);
  expect_sane_bw(cm, "write", 1);
  expect_bidirectional(part.out(r, "h2", 6));
  EXPECT_EQ(part.out(r, "h2", 7)["spec"]["cm"], true);
  // The server logged the connection manager's part.
  EXPECT_NE(r.console.find("(rdma_cm)"), std::string::npos) << r.console;
  const auto& tty = part.out(r, "h2", 8);
  ASSERT_TRUE(tty.is_string()) << r.console;
  const std::string shown = tty.get<std::string>();
  EXPECT_NE(shown.find("bw 4096 B (size 1 of 1): 1."), std::string::npos) << shown;
  EXPECT_NE(shown.find(" of 2 s, "), std::string::npos) << shown;
  EXPECT_LE(part.exit(r, "h2", 8), 1) << shown;
  // Never where no terminal watches: the --json runs above parsed whole.
}

// -a: every power of two from 2 B to 8 MiB, a few messages each (the
// emulated wire moves an 8 MiB message in tens of milliseconds).
void expect_all_sizes(const LabRun& r, const Boot::Part& part) {
  EXPECT_LE(part.exit(r, "h2", 0), 1);
  EXPECT_LE(part.exit(r, "h2", 1), 1);
  const auto& bw = part.out(r, "h2", 0);
  expect_sane_bw(bw, "write", 23);
  if (bw.is_object() && bw["results"].size() == 23) {
    EXPECT_EQ(bw["results"][0]["size"], 2);
    EXPECT_EQ(bw["results"][22]["size"], 8 << 20);
    for (const auto& x : bw["results"]) EXPECT_EQ(x["messages"], 5) << x.dump();
  }
  const auto& lat = part.out(r, "h2", 1);
  ASSERT_TRUE(lat.is_object()) << r.console;
  expect_schema(lat);
  EXPECT_EQ(lat["ok"], true) << lat.dump(2);
  ASSERT_EQ(lat["results"].size(), 23u);
  for (const auto& x : lat["results"]) EXPECT_EQ(x["round_trips"], 5) << x.dump();
}

// Every latency test, the connection manager's runs and -a, in one boot.
TEST(PerfLab, LatencyOfEveryOpTransportAndAllSizesInOneBoot) {
  Boot b;
  const auto basic = b.add({"h2:rdmacheck lat h1 -n 100 --json",
                            "h2:rdmacheck lat h1 --op send -n 100 -s 2,4096 --json",
                            "h2:rdmacheck lat h1 --op read -n 100 --histogram --json"});
  const auto every = b.add(kEveryTransportRuns);
  const auto all = b.add({"h2:rdmacheck bw h1 -a -n 5 -t 16 --json",  //
                          "h2:rdmacheck lat h1 -a -n 5 --json"});
  const auto r = run_lab(b.args());
  ASSERT_TRUE(r.doc.is_object()) << r.console;
  expect_parts(r, {{"write, send, read", basic, expect_basic_lat},
                   {"every transport, atomics, rdma_cm, a terminal", every, expect_every_transport},
                   {"-a", all, expect_all_sizes}});
}

TEST(PerfLab, LossDuringTheTestIsNamedFromTheCounters) {
  // Loss on the sender (h2): its data packets, not only h1's few ACKs, are
  // dropped. 4 KiB messages (4 packets): with the default 64 KiB (64 packets)
  // every go-back-N resend of a message loses a packet again with probability
  // 1 - 0.98^64 = 73 %, so 7 tries in a row fail on about one message in
  // nine and the test ends in "retry counter exceeded" in many runs. That is
  // RC under 2 % loss, not what this test is about: the counters naming loss.
  const auto r = run_lab({"--setup", "h2:tc qdisc add dev eth0 root netem loss 2%", "--run",
                          "h2:rdmacheck bw h1 -D 3 -s 4096 --json"});
  const auto& d = run_output(r, "h2");
  ASSERT_TRUE(d.is_object()) << r.console;
  EXPECT_EQ(d["ok"], true) << d.dump(2);
  const auto ids = finding_ids(d["findings"]);
  ASSERT_FALSE(ids.empty()) << d.dump(2);
  EXPECT_EQ(ids[0], "packet-loss-during-test");
  const std::string evidence = d["findings"][0]["evidence"].dump();
  EXPECT_TRUE(evidence.find("completer_retry_err") != std::string::npos ||
              evidence.find("rcvd_seq_err") != std::string::npos ||
              evidence.find("out_of_seq_request") != std::string::npos)
      << evidence;
  EXPECT_EQ(run_exit(r, "h2"), 1);  // measured, with a warning
}

// A script written for perftest reads the same number from rdmacheck: Debian
// 12's ib_write_bw and rdmacheck bw, side by side over the same pair, each
// with --output bandwidth (MiB/s; Gb/s with --report_gbits). Emulated rates
// wander from run to run, so the two agree within a factor of three, where
// Gb/s against MiB/s would be a factor of 119 apart.
}  // namespace
}  // namespace rdmacheck::labtest
