#include "mesh/report.h"

#include <fmt/core.h>

#include <algorithm>

namespace rdmacheck::mesh {

namespace {

nlohmann::json matrix_json(const Matrix& m) {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& row : m) {
    nlohmann::json r = nlohmann::json::array();
    for (const auto& v : row) r.push_back(v ? nlohmann::json(*v) : nlohmann::json(nullptr));
    rows.push_back(std::move(r));
  }
  return rows;
}

std::string mode_name(const MeshOptions& o) { return o.quick ? "quick" : "default"; }

// One matrix as a table: row = client, column = server.
std::string table(const MeshReport& r, const Matrix& m, const char* title, const char* fmt_spec) {
  const size_t n = r.hosts.size();
  size_t w = 8;
  for (const auto& h : r.hosts) w = std::max(w, h.size() + 2);
  std::string out = fmt::format("{}\n{:<{}}", title, "", w);
  for (const auto& h : r.hosts) out += fmt::format("{:>{}}", h, w);
  out += "\n";
  for (size_t i = 0; i < n; ++i) {
    out += fmt::format("{:<{}}", r.hosts[i], w);
    for (size_t j = 0; j < n; ++j) {
      std::string cell = "-";
      if (r.analysis.m.failed[i][j]) {
        cell = "FAIL";
      } else if (m[i][j]) {
        cell = fmt::format(fmt::runtime(fmt_spec), *m[i][j]);
      }
      out += fmt::format("{:>{}}", cell, w);
    }
    out += "\n";
  }
  return out;
}

std::string size_list(const std::vector<uint32_t>& sizes) {
  std::string s;
  for (auto b : sizes) {
    if (!s.empty()) s += ",";
    s += b % 1024 == 0 ? fmt::format("{} KiB", b / 1024) : fmt::format("{} B", b);
  }
  return s;
}

Tone tone_of(Severity s) {
  return s == Severity::kFail   ? Tone::kBad
         : s == Severity::kWarn ? Tone::kWarn
         : s == Severity::kOk   ? Tone::kGood
                                : Tone::kMuted;
}

}  // namespace

int exit_status(const MeshReport& r) { return rdmacheck::exit_status(r.analysis.findings); }

nlohmann::json to_json(const MeshReport& r) {
  nlohmann::json rounds = nlohmann::json::array();
  for (const auto& t : r.rounds) {
    rounds.push_back({{"round", t.round}, {"pairs", t.pairs}, {"seconds", t.seconds}});
  }
  nlohmann::json probes = nlohmann::json::array();
  for (const auto& p : r.probes) probes.push_back(to_json(p));
  nlohmann::json failed = nlohmann::json::array();
  for (const auto& row : r.analysis.m.failed) failed.push_back(row);
  nlohmann::json pairs = nlohmann::json::array();
  for (const auto& p : r.analysis.pairs) {
    pairs.push_back(
        {{"a", r.hosts[p.a]}, {"b", r.hosts[p.b]}, {"unreachable", p.unreachable}, {"bad", p.bad}});
  }
  auto ref = [](const std::optional<Reference>& x) {
    return x ? nlohmann::json{{"median", x->median}, {"mad", x->mad}} : nlohmann::json(nullptr);
  };
  return {
      {"schema_version", kSchemaVersion},
      {"command", "mesh"},
      {"mode", mode_name(r.options)},
      {"options",
       {{"pings", r.options.probe.pings},
        {"sizes", r.options.probe.sizes},
        {"duration_s", r.options.probe.duration_s},
        {"round_timeout_s", r.options.round_timeout.count()}}},
      {"hosts", r.hosts},
      {"server_errors", r.server_errors},
      {"rounds", rounds},
      {"matrices",
       {{"latency_us", matrix_json(r.analysis.m.latency_us)},
        {"bandwidth_gbps", matrix_json(r.analysis.m.bandwidth_gbps)},
        {"loss", matrix_json(r.analysis.m.loss)},
        {"loss_counters", matrix_json(r.analysis.m.loss_counters)},
        {"failed", failed}}},
      {"reference",
       {{"latency_us", ref(r.analysis.latency)}, {"bandwidth_gbps", ref(r.analysis.bandwidth)}}},
      {"pairs", pairs},
      {"probes", probes},
      {"doctor", to_json(r.doctor)},
      {"findings", to_json(r.analysis.findings)},
      {"exit_status", exit_status(r)},
      {"elapsed_s", r.elapsed_s}};
}

std::string format_text(const MeshReport& r, const TextStyle& style) {
  const size_t n = r.hosts.size();
  std::string out = fmt::format(
      "rdmacheck mesh: {} hosts, {} pair{} in {} round{} ({}: {})\n\n", n, n * (n - 1) / 2,
      n == 2 ? "" : "s", r.rounds.size(), r.rounds.size() == 1 ? "" : "s", mode_name(r.options),
      r.options.quick ? "RC bring-up and ping"
                      : fmt::format("ping, then RDMA WRITE {} for {:g} s each way",
                                    size_list(r.options.probe.sizes), r.options.probe.duration_s));
  out += table(r, r.analysis.m.latency_us,
               "latency (µs, least RC round trip; row = client, column = server)", "{:.0f}");
  if (!r.options.quick) {
    out += "\n" + table(r, r.analysis.m.bandwidth_gbps,
                        "bandwidth (Gb/s, RDMA WRITE row -> column)", "{:.2f}");
  }
  out += "\nrounds:";
  double total = 0;
  for (const auto& t : r.rounds) {
    out += fmt::format("{} {:.1f} s", total == 0 ? "" : ",", t.seconds);
    total += t.seconds;
  }
  out += fmt::format(" (all {:.1f} s)\n", total);
  // The worst pairs first: those that failed, then the outliers.
  std::vector<const PairVerdict*> worst;
  for (const auto& p : r.analysis.pairs) {
    if (p.unreachable || !p.bad.empty()) worst.push_back(&p);
  }
  std::stable_sort(worst.begin(), worst.end(),
                   [](const auto* x, const auto* y) { return x->unreachable > y->unreachable; });
  if (!worst.empty()) {
    out += "worst pairs:\n";
    for (size_t i = 0; i < worst.size() && i < 5; ++i) {
      const auto& p = *worst[i];
      std::string why = p.unreachable ? "cannot connect" : "";
      for (const auto& b : p.bad) why += (why.empty() ? "" : ", ") + b;
      out += fmt::format("  {} <-> {}: {}\n", r.hosts[p.a], r.hosts[p.b], why);
    }
  }
  if (!r.doctor.empty()) {
    out += "\nhost health (each host's doctor, summarised):\n";
    for (const auto& f : r.doctor) {
      out +=
          fmt::format("  {} {}: {}\n", paint(severity_name(f.severity), tone_of(f.severity), style),
                      id_name(f), f.summary);
    }
  }
  out += "\nfindings:\n";
  for (const auto& f : r.analysis.findings) out += format_finding(f);
  const int st = exit_status(r);
  out += fmt::format("\nmesh: {} ({:.1f} s)\n",
                     st == 0   ? paint("PASS", Tone::kGood, style)
                     : st == 1 ? paint("WARN", Tone::kWarn, style)
                               : paint("FAIL", Tone::kBad, style),
                     r.elapsed_s);
  return out;
}

}  // namespace rdmacheck::mesh
