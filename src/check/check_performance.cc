#include <fmt/core.h>

#include <algorithm>

#include "check/check_run.h"
#include "perf/counters.h"
#include "perf/tcp_baseline.h"

namespace rdmacheck::check {

using std::chrono::milliseconds;

std::optional<Finding> unfinished_test_finding(const perf::PerfReport& rep, bool layer2_saw_loss) {
  const auto& spec = rep.options.spec;
  if (worst(rep.findings) == Severity::kFail) return std::nullopt;  // it says why itself
  // Layer 2's probes may all pass on a path that loses 1 % of packets (130
  // probes see no loss about a quarter of the time); the test's own counters
  // then are the observation that packets were lost.
  const bool counted_loss = has_finding(rep.findings, FindingId::kPacketLossDuringTest);
  if (rep.failed == conn::Stage::kTraffic &&
      has_finding(rep.findings, FindingId::kTrafficStalled) && rep.stalled_before_failure) {
    // Layer 2 passed before it: a path that stopped for seconds mid-test
    // (traffic-stalled says when) is an outage the test did not outlast.
    Finding f{
        FindingId::kPerfTestFailed, Severity::kWarn, Layer::kPerformance,
        fmt::format("the {} {} test could not finish: traffic stopped for {:.1f} s in the "
                    "middle of it, after layer 2's probes had got through",
                    name_of(spec.op), name_of(spec.kind), rep.stalled_before_failure->seconds)};
    f.evidence.push_back(rep.error);
    return f;
  }
  if (rep.failed == conn::Stage::kTraffic && (layer2_saw_loss || counted_loss)) {
    // The probes got through: a test that ran out of retries or time under
    // measured loss is what that loss costs, not a dead path.
    Finding f{FindingId::kPerfTestFailed, Severity::kWarn, Layer::kPerformance,
              fmt::format("the {} {} test could not finish under the loss {}: RC's go-back-N "
                          "retransmissions ran out of retries or time",
                          name_of(spec.op), name_of(spec.kind),
                          layer2_saw_loss ? "layer 2 measured" : "its own counters show")};
    f.evidence.push_back(rep.error);
    return f;
  }
  Finding f{FindingId::kPerfTestFailed, Severity::kFail, Layer::kPerformance,
            fmt::format("the {} {} test failed at {}", name_of(spec.op), name_of(spec.kind),
                        name_of(rep.failed))};
  f.evidence.push_back(rep.error);
  return f;
}

std::vector<perf::Spec> perf_plan(const CheckOptions& o) {
  using perf::Kind;
  using perf::Op;
  // The baseline; --full runs every operation in every size.
  static const std::vector<std::pair<Kind, Op>> kBaseline = {{Kind::kBw, Op::kWrite},
                                                             {Kind::kLat, Op::kWrite},
                                                             {Kind::kLat, Op::kSend},
                                                             {Kind::kBw, Op::kRead}};
  static const std::vector<std::pair<Kind, Op>> kFull = {
      {Kind::kBw, Op::kWrite},  {Kind::kBw, Op::kRead},  {Kind::kBw, Op::kSend},
      {Kind::kLat, Op::kWrite}, {Kind::kLat, Op::kSend}, {Kind::kLat, Op::kRead}};
  std::vector<perf::Spec> plan;
  for (const auto& [kind, op] : o.full ? kFull : kBaseline) {
    perf::Spec s{.kind = kind, .op = op};
    if (kind == Kind::kBw) {  // 2 s a size after 0.5 s of warm-up
      s.sizes = o.full ? perf::all_sizes(1u << 20) : std::vector<uint32_t>{65536};
      s.iterations = 0;
      s.duration_s = 2;
      s.warmup_s = 0.5;
      s.cpu_util = true;  // next to the TCP reference's CPU: what RDMA saves
    } else {              // 200 round trips a size, one at a time
      s.sizes = o.full ? perf::all_sizes(4096) : std::vector<uint32_t>{64};
      s.iterations = 200;
      s.tx_depth = 1;
      s.histogram = true;  // the HTML page draws it; the text shows only the figures
    }
    plan.push_back(std::move(s));
  }
  return plan;
}

// Layer 3: the baseline, and TCP beside it.
void performance_layer(CheckRun& run) {
  const CheckOptions& o = run.o;
  CheckReport& r = run.r;
  const conn::Target& target = run.target;
  const Deadline end = run.end;
  const std::atomic<bool>& stop = run.stop;
  auto& deferred = run.deferred;
  auto expired = [&](const std::string& step) { return run.expired(step); };
  if (o.quick) {
    not_run(r, 2, "--quick");
    return;
  }
  auto t3 = Clock::now();
  // Under loss every lost packet of a latency round trip waits out an ACK
  // timeout: fewer round trips keep the layer in its time while still
  // showing what the loss costs.
  bool lossy = std::any_of(r.pings.begin(), r.pings.end(), [](const conn::PingReport& p) {
    return std::any_of(p.probes.begin(), p.probes.end(),
                       [](const conn::ProbeTally& t) { return t.lost() > 0 || t.slow > 0; });
  });
  // The round trip the pings measured: a latency test is round trips one at a
  // time, and on a long path (200 ms) its 200 would outlast the test's time.
  double path_rtt_us = 0;
  for (const auto& p : r.pings) {
    if (p.stats.received > 0) path_rtt_us = std::max(path_rtt_us, p.stats.median);
  }
  for (auto spec : perf_plan(o)) {
    if (lossy && spec.kind == perf::Kind::kLat) {
      spec.iterations = std::min<uint64_t>(spec.iterations, 50);
    }
    if (spec.kind == perf::Kind::kLat && path_rtt_us > 0) {  // about 10 s a size, at least 20
      const auto fit = static_cast<uint64_t>(10e6 / path_rtt_us);
      spec.iterations = std::min<uint64_t>(spec.iterations, std::max<uint64_t>(fit, 20));
    }
    if (expired(fmt::format("{} {}", name_of(spec.op), name_of(spec.kind)))) break;
    perf::PerfOptions po;
    po.target = target;
    po.spec = spec;
    // One test may not take the whole budget: under heavy loss, go-back-N
    // recovery with 1 s ACK timeouts can take minutes.
    po.timeout = std::min(milliseconds(30000), milliseconds(std::max(ms_left(end), 1)));
    r.perf.push_back(perf::run_perf(po, stop));
    const auto& rep = r.perf.back();
    for (auto f : rep.findings) {
      // Several tests raise the same counter finding: each line says which test it was.
      for (auto& e : f.evidence) {
        if (!perf::is_counter_finding(f.id)) break;
        e = fmt::format("{} {}: {}", name_of(spec.op), name_of(spec.kind), e);
      }
      merge(layer(r, Layer::kPerformance), std::move(f));
    }
    if (rep.ok) continue;
    auto unfinished = unfinished_test_finding(rep, lossy);
    const bool go_on = unfinished && unfinished->severity == Severity::kWarn;
    if (unfinished) merge(layer(r, Layer::kPerformance), std::move(*unfinished));
    if (!go_on) break;
    lossy = true;  // the next latency tests run fewer round trips
  }
  // TCP between the same addresses, next to RDMA's figures: the path's own
  // rate and round trip, and what each side's CPU pays for them.
  if (!expired("the TCP reference")) {
    perf::TcpBaselineOptions tb;
    tb.target = o.target;
    tb.seconds = lossy ? 1 : 2;
    tb.timeout = std::min(milliseconds(15000), milliseconds(std::max(ms_left(end), 1)));
    r.tcp_baseline = perf::run_tcp_baseline(tb);
  }
  for (auto& f : deferred) {
    if (f.layer == Layer::kPerformance) merge(layer(r, Layer::kPerformance), f);
  }
  finish_layer(layer(r, Layer::kPerformance), t3);
  if (!r.expired_in.empty()) layer(r, Layer::kPerformance).status = LayerStatus::kFail;
}

}  // namespace rdmacheck::check
