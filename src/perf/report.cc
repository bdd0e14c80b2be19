#include "perf/report.h"

#include <fmt/core.h>

#include "perf/cpu_time.h"
#include "perf/units.h"

namespace rdmacheck::perf {
namespace {

using nlohmann::json;

json facts(const std::optional<proto::HostFacts>& f) {
  return f ? proto::to_json(*f) : json(nullptr);
}

json counters(const Counters& c) {
  json j = json::object();
  for (const auto& [k, v] : c) j[k] = v;
  return j;
}

json opt(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

// The run's spread: each interval's Gb/s and their order statistics; null
// when there are none (bidirectional, or a run too short to cut).
json intervals(const BwSample& b) {
  if (b.interval_gbps.empty()) return nullptr;
  const LatStats s = spread_of(b.interval_gbps);
  return {{"count", s.n},      {"seconds", b.interval_s}, {"gbps", b.interval_gbps},
          {"min_gbps", s.min}, {"median_gbps", s.median}, {"p99_gbps", s.p99}};
}

json cpu(const std::optional<PerfReport::CpuUse>& c) {
  if (!c) return nullptr;
  return {
      {"cpu_s", c->cpu_s}, {"wall_s", c->wall_s}, {"percent", cpu_percent(c->cpu_s, c->wall_s)}};
}

std::string rule() { return std::string(79, '-') + "\n"; }

// Each size's measurement: bandwidth samples, then latency ones.
json results_json(const PerfReport& r) {
  const Spec& s = r.options.spec;
  json results = json::array();
  for (const auto& b : r.bw) {
    json e = {{"size", b.size},         {"messages", b.msgs},       {"seconds", b.seconds},
              {"avg_gbps", b.avg_gbps}, {"peak_gbps", b.peak_gbps}, {"mib_per_s", b.mib_s},
              {"mpps", b.mpps}};
    if (b.bidir) e["directions"] = {{"out_gbps", b.out_gbps}, {"in_gbps", b.in_gbps}};
    e["intervals"] = intervals(b);
    results.push_back(std::move(e));
  }
  for (const auto& l : r.lat) {
    json hist = json::array();
    for (const auto& h : l.histogram) {
      hist.push_back({{"lo_us", h.lo_us}, {"hi_us", h.hi_us}, {"count", h.count}});
    }
    json e = {{"size", l.size},
              {"round_trips", l.stats.n},
              {"measure", l.half_round_trip ? "half_round_trip" : "round_trip"},
              {"min_us", l.stats.min},
              {"median_us", l.stats.median},
              {"mean_us", l.stats.mean},
              {"p99_us", l.stats.p99},
              {"p999_us", l.stats.p999},
              {"max_us", l.stats.max},
              {"stdev_us", l.stats.stdev}};
    if (s.histogram) e["histogram"] = hist;
    results.push_back(std::move(e));
  }
  return results;
}

}  // namespace

json to_json(const PerfReport& r) {
  const Spec& s = r.options.spec;
  const json results = results_json(r);
  return {
      {"command", name_of(s.kind)},
      {"host", r.options.target.host},
      {"port", r.options.target.tcp_port},
      {"ok", r.ok},
      {"failed_stage", r.ok ? json(nullptr) : json(std::string(name_of(r.failed)))},
      {"error", r.error},
      {"spec",
       {{"op", name_of(s.op)},
        {"transport", name_of(s.transport)},
        {"sizes", s.sizes},
        {"iterations", s.iterations},
        {"duration_s", s.duration_s},
        {"warmup_s", s.warmup_s},
        {"qps", s.qps},
        {"tx_depth", s.tx_depth},
        {"rx_depth", s.rx_depth},
        {"inline_size", s.inline_size},
        {"post_list", s.post_list},
        {"cq_mod", s.cq_mod},
        {"events", s.events},
        {"bidirectional", s.bidir},
        {"validate", s.validate},
        {"cm", r.options.cm},
        {"cpu_util", s.cpu_util},
        {"run_infinitely", s.run_infinitely},
        {"path_mtu_bytes", r.options.target.path_mtu},
        {"ack_timeout", r.options.ack_timeout ? json(*r.options.ack_timeout) : json(nullptr)}}},
      {"local", facts(r.local)},
      {"peer", facts(r.peer)},
      {"placement",
       {{"cpu", r.placement.cpu},
        {"numa_node", r.placement.numa_node},
        {"note", r.placement.note}}},
      {"link",
       {{"driver", r.link.driver},
        {"port_gbps", r.link.port_gbps},
        {"netdev_gbps", opt(r.link.netdev_gbps)},
        {"pcie_gbps", opt(r.link.pcie_gbps)},
        {"mtu_bytes", r.link.mtu}}},
      {"results", results},
      {"validation", s.validate
                         ? json{{"checks", r.validation_checks}, {"errors", r.validation_errors}}
                         : json(nullptr)},
      {"counters", {{"local", counters(r.local_counters)}, {"peer", counters(r.peer_counters)}}},
      {"cpu",
       s.cpu_util ? json{{"local", cpu(r.local_cpu)}, {"peer", cpu(r.peer_cpu)}} : json(nullptr)},
      {"peer_wc_errors", r.peer_wc_errors},
      {"warnings", r.warnings},
      {"findings", rdmacheck::to_json(r.findings)},
      {"elapsed_ms", r.elapsed_ms},
  };
}

namespace {

// One line for both printers (the table, from the document; check's, from the sample).
std::string spread_line(const json& i) {
  if (!i.is_object()) return {};
  return fmt::format(
      "over {} intervals of {} s: min {}, median {}, p99 {} Gb/s", i["count"].get<uint64_t>(),
      significant(i["seconds"].get<double>()), significant(i["min_gbps"].get<double>()),
      significant(i["median_gbps"].get<double>()), significant(i["p99_gbps"].get<double>()));
}

// The perftest-like table, rule to rule; nothing when no size was measured
// (a failed run has no figures, and an empty header would suggest some).
std::string results_table(const json& d, bool bw) {
  if (d["results"].empty()) return {};
  std::string out = rule();
  if (bw) {
    // The message rate carries its unit in each row (Mpps, kpps, pps): one
    // unit for the column would print 64 KiB on Soft-RoCE as 0.000 Mpps.
    out += fmt::format(" {:>10} {:>12} {:>14} {:>14} {:>12} {:>12}\n", "#bytes", "#messages",
                       "BW peak[Gb/s]", "BW avg[Gb/s]", "BW[MiB/s]", "MsgRate");
    for (const auto& x : d["results"]) {
      out += fmt::format(" {:>10} {:>12} {:>14.4f} {:>14.4f} {:>12.2f} {:>12}\n",
                         x["size"].get<uint32_t>(), x["messages"].get<uint64_t>(),
                         x["peak_gbps"].get<double>(), x["avg_gbps"].get<double>(),
                         x["mib_per_s"].get<double>(), rate_text(x["mpps"].get<double>()));
      if (x.contains("directions")) {
        out += fmt::format(" {:>10} {:>12} out {:.4f} + in {:.4f} Gb/s\n", "", "",
                           x["directions"]["out_gbps"].get<double>(),
                           x["directions"]["in_gbps"].get<double>());
      }
      // A document saved before the intervals were kept has no such key.
      if (const std::string s = spread_line(x.value("intervals", json(nullptr))); !s.empty()) {
        out += fmt::format(" {:>10} {:>12} {}\n", "", "", s);
      }
    }
  } else {
    out +=
        fmt::format(" {:>10} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}\n", "#bytes", "#iters",
                    "min[us]", "med[us]", "avg[us]", "p99[us]", "p99.9[us]", "max[us]", "stdev");
    for (const auto& x : d["results"]) {
      out += fmt::format(
          " {:>10} {:>9} {:>9.2f} {:>9.2f} {:>9.2f} {:>9.2f} {:>9.2f} {:>9.2f} "
          "{:>9.2f}\n",
          x["size"].get<uint32_t>(), x["round_trips"].get<uint64_t>(), x["min_us"].get<double>(),
          x["median_us"].get<double>(), x["mean_us"].get<double>(), x["p99_us"].get<double>(),
          x["p999_us"].get<double>(), x["max_us"].get<double>(), x["stdev_us"].get<double>());
      for (const auto& h : x.value("histogram", json::array())) {
        out += fmt::format("   {:>9.2f} .. {:>9.2f} us {:>9}\n", h["lo_us"].get<double>(),
                           h["hi_us"].get<double>(), h["count"].get<uint64_t>());
      }
    }
    if (!d["results"].empty()) {
      out += d["results"][0]["measure"] == "round_trip"
                 ? "  (full round trips: the operation waits for the reply data)\n"
                 : "  (half round trips of a ping-pong, as perftest reports them)\n";
    }
  }
  out += rule();
  return out;
}

}  // namespace

std::string format_document(const json& d) {
  std::string out;
  const json& s = d["spec"];
  const bool bw = d["command"] == "bw";
  out += fmt::format(
      "rdmacheck {} {} port {}: {} {} over {}, {} QP(s)\n", d["command"].get<std::string>(),
      d["host"].get<std::string>(), d["port"].get<int>(),
      s["transport"].get<std::string>() == "rc" ? "RC" : s["transport"].get<std::string>(),
      s["op"].get<std::string>(),
      s["duration_s"].get<double>() > 0
          ? fmt::format("{} s per size", s["duration_s"].get<double>())
          : fmt::format("{} iterations per size", s["iterations"].get<uint64_t>()),
      s["qps"].get<int>());
  if (s.value("bidirectional", false))
    out += "  both directions at once (-b): figures are their sum\n";
  for (const char* side : {"local", "peer"}) {
    const json& f = d[side];
    if (f.is_null()) continue;
    const int tclass = f.value("traffic_class", 0);
    const int sl = f.value("sl", 0);
    out += fmt::format("  {:<5} : {} {} port {} GID[{}] {} mtu {}{}\n", side,
                       f["hostname"].get<std::string>(), f["device"].get<std::string>(),
                       f["port"].get<int>(), f["gid_index"].get<int>(),
                       f["gid_type"].get<std::string>(), f["active_mtu_bytes"].get<int>(),
                       tclass != 0 || sl != 0 ? fmt::format(" tclass {} sl {}", tclass, sl) : "");
    if (!f.value("choice", "").empty()) {
      out += fmt::format("  {:<5}   chosen: {}\n", "", f["choice"].get<std::string>());
    }
  }
  if (!d["placement"]["note"].get<std::string>().empty()) {
    out += "  cpu   : " + d["placement"]["note"].get<std::string>() + "\n";
  }
  for (const auto& w : d["warnings"]) out += "  warning: " + w.get<std::string>() + "\n";
  out += results_table(d, bw);
  if (d.contains("cpu") && d["cpu"].is_object()) {
    std::string line;
    for (const char* side : {"local", "peer"}) {
      const json& c = d["cpu"][side];
      if (c.is_null()) continue;
      line += fmt::format("{}{} {:.1f} % of {:.2f} s", line.empty() ? "" : ", ", side,
                          c["percent"].get<double>(), c["wall_s"].get<double>());
    }
    out += "cpu: " + line + " (CPU time of the measuring threads; busy polling is ~100 %)\n";
  }
  for (const char* side : {"local", "peer"}) {
    const json& c = d["counters"][side];
    if (c.empty()) continue;
    std::string line;
    for (const auto& [k, v] : c.items()) line += fmt::format(" {}+{}", k, v.get<uint64_t>());
    out += fmt::format("counters {}:{}\n", side, line);
  }
  // Back from the document (to_json wrote them), through the one finding renderer.
  for (const auto& f : d["findings"]) {
    if (auto fr = finding_from_json(f)) out += format_finding(*fr);
  }
  if (!d["ok"].get<bool>()) {
    out += fmt::format("failed at {}: {}\n", d["failed_stage"].get<std::string>(),
                       d["error"].get<std::string>());
  }
  out += fmt::format("result: {} ({:.0f} ms)\n", d["ok"].get<bool>() ? "PASS" : "FAIL",
                     d["elapsed_ms"].get<double>());
  return out;
}

std::string format_text(const PerfReport& r, const TextStyle& /*style*/) {
  return format_document(to_json(r));
}

std::string spread_text(const BwSample& b) { return spread_line(intervals(b)); }

std::string interval_line(uint32_t size, uint64_t msgs, double seconds) {
  const uint64_t bytes = msgs * size;
  return fmt::format("{:>10} B  {:>14}  {:>10.2f} MiB/s  {:>10}  over {:.1f} s\n", size,
                     gbps_text(gbps(bytes, seconds)), mib_per_s(bytes, seconds),
                     rate_text(mpps(msgs, seconds)), seconds);
}

std::string format_text(const FigureView& v, const TextStyle& /*style*/) {
  std::string out;
  if (!v.report.ok) return out;
  for (const auto& b : v.report.bw) {
    if (v.figure == Figure::kBandwidth) {
      out += fmt::format("{:.6f}\n", v.gbits ? b.avg_gbps : b.mib_s);
    }
    if (v.figure == Figure::kMessageRate) out += fmt::format("{:.6f}\n", b.mpps);
  }
  for (const auto& l : v.report.lat) {
    if (v.figure == Figure::kLatency) out += fmt::format("{:.6f}\n", l.stats.mean);
  }
  return out;
}

}  // namespace rdmacheck::perf
