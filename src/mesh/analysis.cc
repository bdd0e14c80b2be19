#include "mesh/analysis.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

namespace rdmacheck::mesh {

namespace {

constexpr double kMadScale = 1.4826;  // MAD -> sigma for normally distributed noise

Matrix empty_matrix(int n) { return Matrix(n, std::vector<std::optional<double>>(n)); }

std::string latency_text(double us) {
  return us < 1000 ? fmt::format("{:.0f} µs", us) : fmt::format("{:.1f} ms", us / 1000);
}
std::string bandwidth_text(double g) { return fmt::format("{:.2f} Gb/s", g); }
std::string loss_text(double f) { return fmt::format("{:.1f} %", f * 100); }

// One figure of a pair from both directions: the worse one counts.
std::optional<double> worse(std::optional<double> x, std::optional<double> y,
                            bool higher_is_worse) {
  if (!x) return y;
  if (!y) return x;
  return higher_is_worse ? std::max(*x, *y) : std::min(*x, *y);
}

// The median over each host's pairs of one figure, for hosts that have any.
std::vector<double> host_medians(int n, const std::vector<PairVerdict>& pairs,
                                 std::optional<double> PairVerdict::*figure) {
  std::vector<std::vector<double>> per(n);
  for (const auto& p : pairs) {
    if (!(p.*figure)) continue;
    per[p.a].push_back(*(p.*figure));
    per[p.b].push_back(*(p.*figure));
  }
  std::vector<double> out;
  for (auto& v : per) {
    if (!v.empty()) out.push_back(median(std::move(v)));
  }
  return out;
}

std::string pair_name(const std::vector<std::string>& hosts, int a, int b) {
  return fmt::format("{} <-> {}", hosts[a], hosts[b]);
}

void add_unique(std::vector<std::string>& lines, std::string line) {
  if (std::find(lines.begin(), lines.end(), line) == lines.end()) lines.push_back(std::move(line));
}

// The connection layer's diagnosis of the probes between A and B (both
// directions) as evidence lines on F; returns the worst of its findings.
const Finding* diagnosis_of(const std::vector<std::string>& hosts, const std::vector<Probe>& probes,
                            int a, int b, Finding& f, const Finding* top = nullptr) {
  for (const auto& p : probes) {
    if (!((p.from == a && p.to == b) || (p.from == b && p.to == a)) || p.connected()) continue;
    add_unique(f.evidence, fmt::format("{} -> {}: stopped at {}: {}", hosts[p.from], hosts[p.to],
                                       name_of(p.failed), p.error));
    for (const auto& d : p.findings) {
      if (d.severity < Severity::kWarn) continue;
      add_unique(f.evidence, fmt::format("{} -> {}: diagnosis {}: {}", hosts[p.from], hosts[p.to],
                                         id_name(d), d.summary));
      if (!top || d.severity > top->severity) top = &d;
    }
  }
  return top;
}

// The diagnosis' own words, when it has them, complete the summary and give the fix.
void take_diagnosis(Finding& f, const Finding* top) {
  if (!top) return;
  f.summary += ": " + top->summary;
  f.fix = top->fix;
}

}  // namespace

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

Reference reference(const std::vector<double>& host_medians) {
  Reference r;
  r.median = median(host_medians);
  std::vector<double> dev;
  dev.reserve(host_medians.size());
  for (double x : host_medians) dev.push_back(std::abs(x - r.median));
  r.mad = kMadScale * median(std::move(dev));
  return r;
}

Matrices matrices(int hosts, const std::vector<Probe>& probes) {
  Matrices m{empty_matrix(hosts),
             empty_matrix(hosts),
             empty_matrix(hosts),
             empty_matrix(hosts),
             empty_matrix(hosts),
             std::vector<std::vector<bool>>(hosts, std::vector<bool>(hosts, false)),
             std::vector<std::vector<std::string>>(hosts, std::vector<std::string>(hosts))};
  for (const auto& p : probes) {
    if (p.from < 0 || p.to < 0 || p.from >= hosts || p.to >= hosts) continue;
    auto i = static_cast<size_t>(p.from);
    auto j = static_cast<size_t>(p.to);
    m.failed[i][j] = !p.connected();
    if (!p.connected()) continue;
    if (p.pings_ok > 0) {
      m.latency_us[i][j] = p.rtt_us;
      m.latency_median_us[i][j] = p.rtt_median_us;
    }
    if (p.pings_sent > 0) {
      m.loss[i][j] = static_cast<double>(p.pings_sent - p.pings_ok) / p.pings_sent;
    }
    m.bw_error[i][j] = p.bw_error;
    if (p.bw_gbps >= 0) {
      m.bandwidth_gbps[i][j] = p.bw_gbps;
      m.loss_counters[i][j] = static_cast<double>(p.loss_counters);
    }
  }
  return m;
}

namespace {

std::vector<PairVerdict> pair_figures(int n, const Matrices& m) {
  std::vector<PairVerdict> pairs;
  for (int a = 0; a < n; ++a) {
    for (int b = a + 1; b < n; ++b) {
      PairVerdict v{.a = a, .b = b};
      v.unreachable = m.failed[a][b] || m.failed[b][a];
      // Both directions time a round trip over the same path: the better one
      // is the path's (a busy guest adds to one of them, a slow path to both).
      v.latency_us = worse(m.latency_us[a][b], m.latency_us[b][a], false);
      for (auto [i, j] : {std::pair{a, b}, std::pair{b, a}}) {
        if (v.latency_us && m.latency_us[i][j] == v.latency_us && m.latency_median_us[i][j]) {
          v.latency_spread_us = std::max(*m.latency_median_us[i][j] - *v.latency_us, 0.0);
          break;
        }
      }
      v.bandwidth_gbps = worse(m.bandwidth_gbps[a][b], m.bandwidth_gbps[b][a], false);
      v.loss = worse(m.loss[a][b], m.loss[b][a], true);
      pairs.push_back(std::move(v));
    }
  }
  return pairs;
}

// Marks each reachable pair's outlying figures.
void judge_pairs(const std::vector<std::string>& hosts, Analysis& an) {
  const int n = static_cast<int>(hosts.size());
  auto& pairs = an.pairs;
  auto lat = host_medians(n, pairs, &PairVerdict::latency_us);
  auto bw = host_medians(n, pairs, &PairVerdict::bandwidth_gbps);
  auto loss = host_medians(n, pairs, &PairVerdict::loss);
  if (!lat.empty()) an.latency = reference(lat);
  if (!bw.empty()) an.bandwidth = reference(bw);
  const Reference loss_ref = reference(loss);
  for (auto& p : pairs) {
    if (p.unreachable) continue;
    if (p.latency_us && an.latency) {
      const auto& r = *an.latency;
      const double excess = *p.latency_us - r.median;
      if (excess > std::max(kMadFactor * r.mad, kLatencyMargin * r.median) &&
          excess > p.latency_spread_us) {
        p.bad.push_back(fmt::format("latency {} (fleet {})", latency_text(*p.latency_us),
                                    latency_text(r.median)));
      }
    }
    if (p.bandwidth_gbps && an.bandwidth) {
      const auto& r = *an.bandwidth;
      if (*p.bandwidth_gbps <
          r.median - std::max(kMadFactor * r.mad, kBandwidthMargin * r.median)) {
        p.bad.push_back(fmt::format("bandwidth {} (fleet {})", bandwidth_text(*p.bandwidth_gbps),
                                    bandwidth_text(r.median)));
      }
    }
    for (auto [i, j] : {std::pair{p.a, p.b}, std::pair{p.b, p.a}}) {
      if (!an.m.bw_error[i][j].empty()) {
        p.bad.push_back(fmt::format("the bandwidth test {} -> {} failed: {}", hosts[i], hosts[j],
                                    an.m.bw_error[i][j]));
      }
    }
    if (p.loss && *p.loss > loss_ref.median + std::max(kMadFactor * loss_ref.mad, kLossFloor)) {
      p.bad.push_back(fmt::format("{} of pings lost (fleet {})", loss_text(*p.loss),
                                  loss_text(loss_ref.median)));
    }
  }
}

std::string joined(const std::vector<std::string>& v, const char* sep) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : sep) + s;
  return out;
}

// Per host: every pair it has failed (down), or every pair it has is an
// outlier (slow). A single pair cannot tell its two hosts apart, so this
// needs three hosts or more.
struct HostVerdicts {
  std::vector<bool> down;
  std::vector<bool> slow;
  [[nodiscard]] bool blamed(int h) const { return down[h] || slow[h]; }
};

HostVerdicts host_verdicts(int n, const std::vector<PairVerdict>& pairs) {
  HostVerdicts v{std::vector<bool>(n, false), std::vector<bool>(n, false)};
  for (int h = 0; n >= 3 && h < n; ++h) {
    int unreachable = 0, reachable = 0, bad = 0;
    for (const auto& p : pairs) {
      if (p.a != h && p.b != h) continue;
      if (p.unreachable) {
        ++unreachable;
      } else {
        ++reachable;
        bad += p.bad.empty() ? 0 : 1;
      }
    }
    v.down[h] = unreachable == n - 1;
    v.slow[h] = reachable >= 2 && bad == reachable;
  }
  return v;
}

Finding bad_host(const std::vector<std::string>& hosts, const std::vector<Probe>& probes,
                 const Analysis& an, int h, bool down) {
  const int n = static_cast<int>(hosts.size());
  Finding f = make_finding(
      FindingId::kMeshBadHost, down ? Severity::kFail : Severity::kWarn,
      down ? Layer::kConnection : Layer::kPerformance,
      down ? fmt::format("{}: no pair with {} connected ({} of {} pairs failed)", hosts[h],
                         hosts[h], n - 1, n - 1)
           : fmt::format("{}: every pair with {} is an outlier, while the other hosts' pairs "
                         "are not",
                         hosts[h], hosts[h]));
  f.host = hosts[h];
  f.subject = "host";
  const Finding* top = nullptr;
  for (const auto& p : an.pairs) {
    if (p.a != h && p.b != h) continue;
    if (down) {
      top = diagnosis_of(hosts, probes, p.a, p.b, f, top);
    } else {
      f.evidence.push_back(pair_name(hosts, p.a, p.b) + ": " + joined(p.bad, ", "));
    }
  }
  take_diagnosis(f, top);
  if (f.fix.empty()) {
    f.fix = fmt::format(
        "on {0}: 'rdmacheck doctor', then 'rdmacheck check {1}' from {0} "
        "names the layer that fails",
        hosts[h], hosts[h == 0 ? 1 : 0]);
  }
  return f;
}

// A pair that failed or is an outlier while neither of its hosts is to blame.
std::optional<Finding> bad_pair(const std::vector<std::string>& hosts,
                                const std::vector<Probe>& probes, const PairVerdict& p) {
  const int n = static_cast<int>(hosts.size());
  const std::string name = pair_name(hosts, p.a, p.b);
  if (p.unreachable) {
    Finding f = make_finding(FindingId::kMeshUnreachablePair, Severity::kFail, Layer::kConnection,
                             name + " cannot connect");
    f.subject = fmt::format("{}-{}", hosts[p.a], hosts[p.b]);
    take_diagnosis(f, diagnosis_of(hosts, probes, p.a, p.b, f));
    if (f.fix.empty()) {
      f.fix = fmt::format("'rdmacheck check {}' from {} names the layer that fails", hosts[p.b],
                          hosts[p.a]);
    }
    return f;
  }
  if (p.bad.empty()) return std::nullopt;
  Finding f =
      make_finding(FindingId::kMeshBadPair, Severity::kWarn, Layer::kPerformance,
                   fmt::format("{}: {}, while every other pair of {} and of {} is within the fleet",
                               name, joined(p.bad, ", "), hosts[p.a], hosts[p.b]));
  f.subject = fmt::format("{}-{}", hosts[p.a], hosts[p.b]);
  f.evidence.push_back(
      fmt::format("{}: {} bad of 1; each host's other {} pairs pass", name, p.bad.size(), n - 2));
  f.fix = fmt::format(
      "the link between {0} and {1} (cables, switch ports, ACLs on the path): "
      "'rdmacheck check {1}' from {0}",
      hosts[p.a], hosts[p.b]);
  return f;
}

// Nothing was measured: one rank is no mesh, and a healthy verdict would
// claim pairs that never ran.
Finding too_few_hosts(const std::vector<std::string>& hosts) {
  const size_t n = hosts.size();
  Finding f =
      make_finding(FindingId::kMeshTooFewHosts, Severity::kFail, Layer::kConnection,
                   fmt::format("{} host{} in the mesh: no pair to test", n, n == 1 ? "" : "s"));
  f.evidence.push_back(fmt::format("the ranks ran on: {}", n == 0 ? "none" : hosts[0]));
  f.fix =
      "start one rank per host on two hosts or more: mpirun -np N --map-by ppr:1:node "
      "--hostfile HOSTS rdmacheck mesh (or srun -N N --ntasks-per-node=1 rdmacheck mesh)";
  return f;
}

}  // namespace

Analysis analyse(const std::vector<std::string>& hosts, const std::vector<Probe>& probes) {
  const int n = static_cast<int>(hosts.size());
  Analysis an;
  an.m = matrices(n, probes);
  an.pairs = pair_figures(n, an.m);
  judge_pairs(hosts, an);
  // A host to blame takes its pairs' findings; the pairs left speak for themselves.
  const HostVerdicts v = host_verdicts(n, an.pairs);
  for (int h = 0; h < n; ++h) {
    if (v.blamed(h)) an.findings.push_back(bad_host(hosts, probes, an, h, v.down[h]));
  }
  for (const auto& p : an.pairs) {
    if (v.blamed(p.a) || v.blamed(p.b)) continue;
    if (auto f = bad_pair(hosts, probes, p)) an.findings.push_back(std::move(*f));
  }
  if (n < 2) an.findings.push_back(too_few_hosts(hosts));
  if (an.findings.empty()) {
    const size_t pairs = an.pairs.size();
    Finding f = make_finding(
        FindingId::kMeshHealthy, Severity::kOk, Layer::kPerformance,
        fmt::format(
            "all {} pairs of {} hosts connected, none an outlier{}{}", pairs, n,
            an.latency ? "; latency median " + latency_text(an.latency->median) : "",
            an.bandwidth ? ", bandwidth median " + bandwidth_text(an.bandwidth->median) : ""));
    an.findings.push_back(std::move(f));
  }
  return an;
}

std::vector<Finding> summarise_doctor(const std::vector<std::string>& hosts,
                                      const std::vector<std::vector<Finding>>& per_host) {
  struct Seen {
    Finding first;
    std::vector<std::string> on;
  };
  std::vector<Seen> seen;
  for (size_t h = 0; h < per_host.size() && h < hosts.size(); ++h) {
    for (const auto& f : per_host[h]) {
      if (f.severity == Severity::kOk) continue;
      auto it = std::find_if(seen.begin(), seen.end(), [&](const Seen& s) {
        return same_id(s.first, f) && s.first.subject == f.subject;
      });
      if (it == seen.end()) {
        seen.push_back(Seen{f, {}});
        it = seen.end() - 1;
      }
      it->first.severity = std::max(it->first.severity, f.severity);
      add_unique(it->on, hosts[h]);
    }
  }
  std::vector<Finding> out;
  for (auto& s : seen) {
    Finding f = s.first;
    const size_t n = hosts.size();
    if (s.on.size() == 1) {
      f.host = s.on.front();
      f.summary = f.host + ": " + f.summary;
    } else {
      f.host.clear();
      f.summary += s.on.size() == n ? fmt::format(" (on all {} hosts)", n)
                                    : fmt::format(" (on {} of {} hosts: {})", s.on.size(), n,
                                                  joined(s.on, ", "));
      for (auto& e : f.evidence) e = s.on.front() + ": " + e;
    }
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace rdmacheck::mesh
