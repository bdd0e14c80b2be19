#include "mesh/run.h"

#include <fmt/core.h>
#include <unistd.h>

#include <memory>
#include <optional>

#include "doctor/doctor.h"
#include "doctor/sources.h"
#include "mesh/local_server.h"
#include "mesh/schedule.h"

namespace rdmacheck::mesh {

namespace {

using std::chrono::milliseconds;

std::string hex(const proto::Nonce& n) {
  std::string s;
  for (auto b : n) s += fmt::format("{:02x}", b);
  return s;
}

std::string my_hostname() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0) return "localhost";
  return buf;
}

double since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// What each rank tells the others before the rounds.
struct Peer {
  std::string host;
  uint16_t port = 0;  // 0: its server did not start
  std::string error;  // why not
};

std::vector<Finding> my_doctor() {
  FsRoot fs = FsRoot::live();
  auto src = doctor::live_sources(fs);
  return doctor::run_doctor(fs, *src).findings();
}

// A probe that cannot be tried: the partner's server is not there.
Probe unreached(int from, int to, int round, const Peer& peer) {
  Probe p{.from = from, .to = to, .round = round, .failed = conn::Stage::kTcpConnect};
  p.error = fmt::format("{}'s in-process server did not start: {}", peer.host, peer.error);
  return p;
}

// This rank's server for its partners, with the run's key. The key: rank 0
// draws it, MPI carries it, every server demands it (one identity, "mesh":
// the hex of 32 random bytes is a ring line's key).
struct MyServer {
  std::optional<std::string> key_file;  // nullopt: could not be written
  std::unique_ptr<LocalServer> server;
  std::string error;  // why there is no server
  [[nodiscard]] uint16_t port() const { return server ? server->port() : 0; }
};

MyServer start_my_server(const MeshOptions& o, Control& c) {
  MyServer m;
  const std::string key = c.broadcast(c.rank() == 0 ? hex(proto::fresh_nonce()) : "");
  auto key_file = write_key_file("mesh " + key + "\n");
  if (!key_file) {
    m.error = key_file.error().message();
    return m;
  }
  m.key_file = *key_file;
  auto s = LocalServer::start(*key_file, o.dev,
                              std::chrono::duration_cast<milliseconds>(o.round_timeout));
  if (s) {
    m.server = std::move(*s);
  } else {
    m.error = s.error().message();
  }
  return m;
}

// Every rank's host name and server port (or why it has none), in rank order.
std::vector<Peer> exchange_peers(Control& c, const MyServer& m) {
  nlohmann::json facts = {{"host", my_hostname()}, {"port", m.port()}, {"error", m.error}};
  std::vector<Peer> peers;
  for (const auto& s : c.allgather(facts.dump())) {
    auto j = nlohmann::json::parse(s);
    peers.push_back(Peer{j.at("host").get<std::string>(), j.at("port").get<uint16_t>(),
                         j.at("error").get<std::string>()});
  }
  return peers;
}

struct Rounds {
  std::vector<Probe> mine;
  std::vector<RoundTiming> timing;
};

// The rounds, every rank in step: pings and each direction's bandwidth share
// the round (a fifth for the pings, two for each direction: a bandwidth
// test's first session also reads both sides' counters); each part ends on time.
Rounds run_rounds(const MeshOptions& o, Control& c, const std::vector<Peer>& peers,
                  const MyServer& m, const std::atomic<bool>& stop) {
  const int me = c.rank();
  const int n = c.size();
  const auto round_budget = std::chrono::duration_cast<milliseconds>(o.round_timeout);
  const auto ping_part = o.quick ? round_budget : round_budget / 5;
  const auto bw_part = (round_budget - ping_part) / 2;
  Rounds out;
  for (int r = 0; r < round_count(n); ++r) {
    const auto t0 = Clock::now();
    const int p = partner(n, r, me);
    conn::Target t;
    t.fs = FsRoot::live();
    std::optional<Probe> probe;
    if (p != kBye) {
      t.host = peers[p].host;
      t.tcp_port = peers[p].port;
      t.dev = o.dev;
      t.psk_file = m.key_file.value_or("");
      probe = peers[p].port == 0 || !m.key_file ? unreached(me, p, r, peers[p])
                                                : ping_probe(t, o.probe, me, p, r, ping_part);
    }
    c.barrier();
    if (!o.quick) {
      // Each direction on its own: the lower rank of each pair sends first.
      for (bool lower_first : {true, false}) {
        if (probe && probe->connected() && (me < p) == lower_first) {
          bandwidth_probe(t, o.probe, *probe, bw_part, stop);
        }
        c.barrier();
      }
    }
    if (probe) out.mine.push_back(std::move(*probe));
    out.timing.push_back(RoundTiming{r, static_cast<int>(round_pairs(n, r).size()), since(t0)});
  }
  return out;
}

// Rank 0's report from every rank's doctor and probes (ALL, in rank order).
MeshReport report_of(const MeshOptions& o, const std::vector<Peer>& peers,
                     const std::vector<std::string>& all, std::vector<RoundTiming> rounds) {
  MeshReport rep;
  rep.options = o;
  rep.rounds = std::move(rounds);
  std::vector<std::vector<Finding>> doctors;
  for (size_t i = 0; i < peers.size(); ++i) {
    rep.hosts.push_back(peers[i].host);
    rep.server_errors.push_back(peers[i].error);
    auto j = nlohmann::json::parse(all[i]);
    std::vector<Finding> d;
    for (const auto& f : j.at("doctor")) {
      if (auto fr = finding_from_json(f)) d.push_back(std::move(*fr));
    }
    doctors.push_back(std::move(d));
    for (const auto& pj : j.at("probes")) {
      if (auto pr = probe_from_json(pj)) rep.probes.push_back(std::move(*pr));
    }
  }
  rep.doctor = summarise_doctor(rep.hosts, doctors);
  rep.analysis = analyse(rep.hosts, rep.probes);
  return rep;
}

}  // namespace

std::optional<MeshReport> run_mesh(const MeshOptions& o, Control& c,
                                   const std::atomic<bool>& stop) {
  const auto start = Clock::now();
  MyServer m = start_my_server(o, c);
  const std::vector<Peer> peers = exchange_peers(c, m);
  const auto doctor = my_doctor();
  // The rounds start together, once every host's doctor is done: a host
  // still spawning its checks answers pings late, which read as its latency.
  c.barrier();
  Rounds rounds = run_rounds(o, c, peers, m, stop);
  m.server.reset();
  if (m.key_file) ::unlink(m.key_file->c_str());

  nlohmann::json out = {{"doctor", to_json(doctor)}, {"probes", nlohmann::json::array()}};
  for (const auto& p : rounds.mine) out["probes"].push_back(to_json(p));
  auto all = c.gather(out.dump());
  if (c.rank() != 0) return std::nullopt;
  MeshReport rep = report_of(o, peers, all, std::move(rounds.timing));
  rep.elapsed_s = since(start);
  return rep;
}

}  // namespace rdmacheck::mesh
