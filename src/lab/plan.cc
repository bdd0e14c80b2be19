#include "lab/plan.h"

#include <fmt/core.h>

#include <algorithm>

#include "lab/wire.h"

namespace rdmacheck::lab {
namespace {

std::string host_name(int i) { return fmt::format("h{}", i); }

Result<int> host_index(const std::string& name, int hosts) {
  if (name.size() >= 2 && name[0] == 'h') {
    const std::string digits = name.substr(1);
    if (std::all_of(digits.begin(), digits.end(), ::isdigit) && digits.size() <= 2) {
      const int i = std::stoi(digits);
      if (i >= 1 && i <= hosts) return i;
    }
  }
  return plain_error("lab", fmt::format("unknown host '{}': the lab has h1..h{}", name, hosts));
}

// "bash -c" of a list of lines, each echoed first so the transcript shows it.
std::string command_block(const std::vector<std::string>& cmds, const std::string& kind) {
  std::string out;
  for (size_t i = 0; i < cmds.size(); ++i) {
    out += fmt::format("run_{} {} \"$D/{}.{}.sh\"\n", kind, i + 1, kind, i + 1);
  }
  return out;
}

}  // namespace

Result<HostCmd> parse_host_cmd(const std::string& s, int hosts) {
  const auto colon = s.find(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 >= s.size()) {
    return plain_error("lab", fmt::format("'{}': expected HOST:COMMAND, e.g. 'h1:ip link'", s));
  }
  auto idx = host_index(s.substr(0, colon), hosts);
  if (!idx) return idx.error();
  return HostCmd{s.substr(0, colon), s.substr(colon + 1)};
}

Result<std::vector<HostCmd>> fault_commands(const std::string& fault, int hosts, bool* no_server) {
  std::string name = fault;
  std::string host = "h1";  // faults land on the server by default
  if (auto at = fault.find('@'); at != std::string::npos) {
    name = fault.substr(0, at);
    host = fault.substr(at + 1);
  }
  if (auto idx = host_index(host, hosts); !idx) return idx.error();
  std::string arg;
  if (auto colon = name.find(':'); colon != std::string::npos) {
    arg = name.substr(colon + 1);
    name = name.substr(0, colon);
  }
  if (name == "firewall" && arg.empty()) {
    return std::vector<HostCmd>{{host, "iptables -I INPUT -p udp --dport 4791 -j DROP"}};
  }
  if (name == "mtu-mismatch" && arg.empty()) {
    return std::vector<HostCmd>{{host, "ip link set eth0 mtu 9000"}};
  }
  if (name == "loss") {
    char* end = nullptr;
    const double pct = std::strtod(arg.c_str(), &end);
    if (arg.empty() || *end != '\0' || !(pct > 0 && pct <= 100)) {
      return plain_error("--fault",
                         fmt::format("'{}': loss needs a percentage, e.g. loss:1", fault));
    }
    return std::vector<HostCmd>{
        {host, fmt::format("tc qdisc add dev eth0 root netem loss {}%", arg)}};
  }
  if (name == "powersave" && arg.empty()) {
    // The emulated CPU has no cpufreq of its own: a tmpfs over cpu0 shows
    // the kernel's view of a host left in powersave, which is what the
    // doctor reads.
    const std::string cpu0 = "/sys/devices/system/cpu/cpu0";
    return std::vector<HostCmd>{
        {host, fmt::format("mount -t tmpfs powersave {0} && mkdir {0}/cpufreq && "
                           "echo powersave > {0}/cpufreq/scaling_governor",
                           cpu0)}};
  }
  if (name == "no-server" && arg.empty()) {
    *no_server = true;
    return std::vector<HostCmd>{};
  }
  return plain_error("--fault", fmt::format("unknown fault '{}': choose firewall, mtu-mismatch, "
                                            "loss:PERCENT, powersave or no-server, optionally "
                                            "@HOST",
                                            fault));
}

Result<std::vector<GuestPlan>> make_plan(const LabOptions& o) {
  if (o.hosts < 1 || o.hosts > kMaxHosts) {
    return plain_error("--hosts", fmt::format("{} hosts: the lab runs 1..{}", o.hosts, kMaxHosts));
  }
  std::vector<GuestPlan> plan;
  for (int i = 1; i <= o.hosts; ++i) {
    GuestPlan g;
    g.name = host_name(i);
    g.index = i;
    g.address = fmt::format("198.18.0.{}", i);
    plan.push_back(std::move(g));
  }
  bool no_server = false;
  for (const auto& f : o.faults) {
    auto cmds = fault_commands(f, o.hosts, &no_server);
    if (!cmds) return cmds.error();
    for (auto& c : *cmds) plan[std::stoi(c.host.substr(1)) - 1].setup.push_back(c.cmd);
  }
  for (const auto& s : o.setup) {
    auto c = parse_host_cmd(s, o.hosts);
    if (!c) return c.error();
    plan[std::stoi(c->host.substr(1)) - 1].setup.push_back(c->cmd);
  }
  plan[0].serve = !no_server;
  plan[0].serve_args = o.serve_args;
  if (o.run.empty()) {
    // The default test: the last host runs the whole layered check against h1.
    plan.back().run.push_back(std::string("rdmacheck check h1") + (o.json ? " --json" : ""));
  }
  for (const auto& r : o.run) {
    auto c = parse_host_cmd(r, o.hosts);
    if (!c) return c.error();
    plan[std::stoi(c->host.substr(1)) - 1].run.push_back(c->cmd);
  }
  return plan;
}

std::string hosts_file(const std::vector<GuestPlan>& plan) {
  std::string out = "127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n";
  for (const auto& g : plan) out += fmt::format("{}\t{}\n", g.address, g.name);
  return out;
}

std::string guest_script(const GuestPlan& g, const std::vector<GuestPlan>& plan) {
  std::string others;
  for (const auto& p : plan) others += (others.empty() ? "" : " ") + p.name;
  std::string s = fmt::format(R"SH(#!/bin/bash
# Generated by rdmacheck lab for {name}. Files in $D tell the host how far we got.
LAB=/run/lab
ME={name}
D=$LAB/{name}
echo; echo "rdmacheck-lab: up {name}"
export PATH=$LAB/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root TERM=dumb
export RDMACHECK_PSK_FILE=$LAB/{key}
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs dev /dev
mount -t tmpfs tmp /tmp
mkdir -p /dev/pts /dev/shm && mount -t devpts devpts /dev/pts
cut -d' ' -f1 /proc/uptime > $D/booted
step() {{ echo "$1" > $D/step; }}
die() {{ echo "lab: $ME: $1" >&2; echo "$1" > $D/failed; sync; echo o > /proc/sysrq-trigger; sleep 60; }}
wait_all() {{ for h in {others}; do while [ ! -e $LAB/$h/$1 ]; do [ -e $LAB/$h/failed ] && die "$h failed"; sleep 0.1; done; done; }}
run_setup() {{ echo "+ $(cat "$2")"; bash "$2" || die "setup command $1 failed with exit status $?"; }}
run_run() {{ echo "+ $(cat "$2")"; bash "$2" | tee $D/out.$1; local rc=${{PIPESTATUS[0]}}; echo $rc > $D/rc.$1; [ $rc -gt $worst ] && worst=$rc; }}
hostname $ME
mount --bind $LAB/hosts /etc/hosts
step network
modprobe -a virtio_net rdma_rxe ib_uverbs rdma_ucm || die "cannot load the RDMA modules"
ip link set lo up
ip addr add {address}/24 dev eth0 || die "no eth0"
ip link set eth0 up
rdma link add rxe0 type rxe netdev eth0 || die "rdma link add rxe0 failed"
for i in $(seq 100); do grep -q ACTIVE /sys/class/infiniband/rxe0/ports/1/state 2>/dev/null && break; sleep 0.1; done
grep -q ACTIVE /sys/class/infiniband/rxe0/ports/1/state || die "rxe0 port 1 did not become ACTIVE"
step setup
)SH",
                              fmt::arg("name", g.name), fmt::arg("others", others),
                              fmt::arg("address", g.address), fmt::arg("key", kLabKeyFile));
  s += command_block(g.setup, "setup");
  s += "touch $D/ready\nwait_all ready\n";
  if (g.serve) {
    s += fmt::format("step serve\nrdmacheck serve --psk-file $LAB/{}{}{} > $D/serve.log 2>&1 &\n",
                     kLabKeyFile, g.serve_args.empty() ? "" : " ", g.serve_args);
    s +=
        R"SH(for i in $(seq 100); do grep -q listening $D/serve.log 2>/dev/null && break; sleep 0.1; done
grep -q listening $D/serve.log || die "rdmacheck serve did not start: $(cat $D/serve.log)"
tail -n +2 -f $D/serve.log &
)SH";
  }
  s += "touch $D/started\nwait_all started\nstep run\nworst=0\n";
  s += command_block(g.run, "run");
  if (!g.run.empty()) {
    // Stay up: another host may still be testing against this one; the lab
    // stops every guest once all runners are done.
    s += "echo $worst > $D/exit\nstep done\nsync\n";
  }
  s += collect_script();
  s += "while true; do sleep 3600; done\n";
  return s;
}

}  // namespace rdmacheck::lab
