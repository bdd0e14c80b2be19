#include "lab/plan.h"

#include <fmt/core.h>

#include <algorithm>
#include <array>

#include "lab/ssh.h"
#include "lab/wire.h"

namespace rdmacheck::lab {
namespace {

std::string host_name(int i) { return fmt::format("h{}", i); }

}  // namespace

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

Result<NicTarget> parse_nic_target(const std::string& s, int hosts, int nics) {
  const auto dash = s.find('-');
  auto idx = host_index(s.substr(0, dash), hosts);
  if (!idx) return idx.error();
  if (dash == std::string::npos) return NicTarget{s, 0};
  const std::string k = s.substr(dash + 1);
  if (k.size() == 1 && k[0] >= '1' && k[0] - '0' <= nics)
    return NicTarget{s.substr(0, dash), k[0] - '0'};
  return plain_error("lab", fmt::format("unknown NIC '{}': the lab's hosts have NICs 1..{} "
                                        "(--nics), named like h1-1",
                                        s, nics));
}

namespace {

std::string nic_mac(int wire, int host) {
  // Wire 1 keeps the single-NIC lab's MACs.
  return fmt::format("52:54:00:12:{:02x}:{:02x}", 0x34 + wire - 1, host);
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

Result<std::vector<SwitchFault>> switch_faults(const LabOptions& o) {
  std::vector<SwitchFault> out;
  for (const auto& f : o.faults) {
    if (!is_switch_fault(f)) continue;
    auto sf = parse_switch_fault(f, o.hosts, o.nics);
    if (!sf) return sf.error();
    out.push_back(std::move(*sf));
  }
  for (const auto* timed : {&o.fault_at, &o.fault_until}) {
    const bool at = timed == &o.fault_at;
    const std::string option = at ? "--fault-at" : "--fault-until";
    for (const auto& spec : *timed) {
      auto t = parse_timed_fault(spec, option);
      if (!t) return t.error();
      if (!is_switch_fault(t->second)) {
        return plain_error(option, fmt::format("'{}': only a switch fault (switch-...) can be "
                                               "timed; a host fault is set before the test, "
                                               "with --fault",
                                               spec));
      }
      // --fault-until of a FAULT that --fault-at starts ends that one: a window.
      if (!at) {
        auto same = std::find_if(out.begin(), out.end(), [&](const SwitchFault& f) {
          return f.at_s && !f.until_s && f.spec.starts_with("--fault-at ") &&
                 f.spec.ends_with(":" + t->second);
        });
        if (same != out.end()) {
          if (t->first <= *same->at_s) {
            return plain_error(option,
                               fmt::format("'{}' ends before {} starts it", spec, same->spec));
          }
          same->until_s = t->first;
          same->spec += fmt::format(" {} {}", option, spec);
          continue;
        }
      }
      auto sf = parse_switch_fault(t->second, o.hosts, o.nics);
      if (!sf) return sf.error();
      (at ? sf->at_s : sf->until_s) = t->first;
      sf->spec = fmt::format("{} {}", option, spec);
      out.push_back(std::move(*sf));
    }
  }
  return out;
}

Result<std::vector<GuestPlan>> make_plan(const LabOptions& o) {
  if (o.hosts < 1 || o.hosts > kMaxHosts) {
    return plain_error("--hosts", fmt::format("{} hosts: the lab runs 1..{}", o.hosts, kMaxHosts));
  }
  if (o.nics < 1 || o.nics > kMaxNics) {
    return plain_error("--nics", fmt::format("{} NICs: a lab host has 1..{}", o.nics, kMaxNics));
  }
  std::vector<GuestPlan> plan;
  for (int i = 1; i <= o.hosts; ++i) {
    GuestPlan g;
    g.name = host_name(i);
    g.index = i;
    for (int k = 1; k <= o.nics; ++k) {
      const int dev = o.device_order == DeviceOrder::kNics ? k - 1 : o.nics - k;
      g.nics.push_back(GuestNic{.wire = k,
                                .netdev = fmt::format("eth{}", k - 1),
                                .device = fmt::format("rxe{}", dev),
                                .address = fmt::format("198.18.{}.{}", k - 1, i),
                                .name = fmt::format("{}-{}", g.name, k),
                                .mac = nic_mac(k, i)});
    }
    g.address = g.nics.front().address;
    plan.push_back(std::move(g));
  }
  if (auto sw = switch_faults(o); !sw) return sw.error();
  bool no_server = false;
  for (const auto& f : o.faults) {
    if (is_switch_fault(f)) continue;  // the hub's (switch_faults)
    auto cmds = fault_commands(f, o.hosts, o.nics, &no_server);
    if (!cmds) return cmds.error();
    for (auto& c : *cmds) plan[std::stoi(c.host.substr(1)) - 1].setup.push_back(c.cmd);
  }
  for (const auto& s : o.setup) {
    auto c = parse_host_cmd(s, o.hosts);
    if (!c) return c.error();
    plan[std::stoi(c->host.substr(1)) - 1].setup.push_back(c->cmd);
  }
  plan[0].serve = !no_server && !o.mesh;  // the mesh runs its own servers
  plan[0].serve_args = o.serve_args;
  for (auto& g : plan) g.ssh = o.ssh || o.mesh;
  if (o.run.empty() && o.mesh) {
    plan[0].run.push_back(mesh_command(o.hosts, o.json));
  } else if (o.run.empty()) {
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
  for (const auto& g : plan) {
    for (const auto& n : g.nics) {
      out += n.wire == 1 ? fmt::format("{}\t{} {}\n", n.address, g.name, n.name)
                         : fmt::format("{}\t{}\n", n.address, n.name);
    }
  }
  return out;
}

std::vector<WirePort> wire_ports(const std::vector<GuestPlan>& plan) {
  std::vector<WirePort> ports;
  size_t nics = 0;
  for (const auto& g : plan) nics = std::max(nics, g.nics.size());
  for (size_t k = 0; k < nics; ++k) {
    for (const auto& g : plan) {
      if (k >= g.nics.size()) continue;
      const GuestNic& n = g.nics[k];
      ports.push_back(WirePort{g.name, n, fmt::format("hub-{}.sock", n.name), n.name + ".sock"});
    }
  }
  return ports;
}

namespace {

// Brings up each NIC (after checking it is the one on the planned wire: the
// guest names them in PCI order) and creates the rxe devices in the order of
// their names, as a driver would probe them.
std::string network_script(const GuestPlan& g) {
  std::string s;
  for (const auto& n : g.nics) {
    s += fmt::format(
        "[ \"$(cat /sys/class/net/{0}/address 2>/dev/null)\" = {1} ] || "
        "die \"{0} is not the NIC with MAC {1} (wire {2})\"\n"
        "ip addr add {3}/24 dev {0} || die \"no {0}\"\n"
        "ip link set {0} up\n",
        n.netdev, n.mac, n.wire, n.address);
  }
  std::vector<GuestNic> by_device = g.nics;
  std::sort(by_device.begin(), by_device.end(),
            [](const GuestNic& a, const GuestNic& b) { return a.device < b.device; });
  for (const auto& n : by_device) {
    s += fmt::format("rdma link add {0} type rxe netdev {1} || die \"rdma link add {0} failed\"\n",
                     n.device, n.netdev);
  }
  for (const auto& n : by_device) {
    s += fmt::format(
        "for i in $(seq 100); do grep -q ACTIVE /sys/class/infiniband/{0}/ports/1/state "
        "2>/dev/null && break; sleep 0.1; done\n"
        "grep -q ACTIVE /sys/class/infiniband/{0}/ports/1/state || "
        "die \"{0} port 1 did not become ACTIVE\"\n",
        n.device);
  }
  return s;
}

}  // namespace

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
# /tmp is the guest's own (a tmpfs upper layer) over the host's /tmp
# (read-only lower layer): a command naming a file of a checkout under the
# host's /tmp finds it here too. Without overlayfs, a plain tmpfs, and a word.
if ! {{ modprobe overlay 2>/dev/null && mkdir -p /run/tmp-upper /run/tmp-work &&
       mount -t overlay tmp -o lowerdir=/tmp,upperdir=/run/tmp-upper,workdir=/run/tmp-work /tmp; }}; then
  mount -t tmpfs tmp /tmp
  echo "lab: $ME: no overlayfs: the host's /tmp is not visible in this guest" >&2
fi
mkdir -p /dev/pts /dev/shm && mount -t devpts devpts /dev/pts
cut -d' ' -f1 /proc/uptime > $D/booted
step() {{ echo "$1" > $D/step; }}
die() {{ echo "lab: $ME: $1" >&2; echo "$1" > $D/failed; sync; echo o > /proc/sysrq-trigger; sleep 60; }}
wait_all() {{ for h in {others}; do while [ ! -e $LAB/$h/$1 ]; do [ -e $LAB/$h/failed ] && die "$h failed"; sleep 0.1; done; done; }}
run_setup() {{ echo "+ $(cat "$2")"; bash "$2" || die "setup command $1 failed with exit status $?"; }}
run_run() {{ echo "+ $(cat "$2")"; bash "$2" | tee $D/out.$1; local rc=${{PIPESTATUS[0]}}; echo $rc > $D/rc.$1; cannot_run $1 $rc "$2"; [ $rc -gt $worst ] && worst=$rc; }}
# 126/127: the shell could not run it (not found, not executable): the lab
# ends now with that named, rather than leave the other hosts waiting for it.
cannot_run() {{ [ $2 -eq 126 ] || [ $2 -eq 127 ] || return 0; die "run command $1 could not be run (exit status $2: not found or not executable): $(cat "$3")"; }}
hostname $ME
mount --bind $LAB/hosts /etc/hosts
step network
modprobe -a virtio_net rdma_rxe ib_uverbs rdma_ucm || die "cannot load the RDMA modules"
ip link set lo up
)SH",
                              fmt::arg("name", g.name), fmt::arg("others", others),
                              fmt::arg("key", kLabKeyFile));
  s += network_script(g);
  s += "step setup\n";
  s += command_block(g.setup, "setup");
  if (g.ssh) s += ssh_guest_script();
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
  std::vector<std::string> netdevs;
  for (const auto& n : g.nics) netdevs.push_back(n.netdev);
  s += collect_script(netdevs);
  s += "while true; do sleep 3600; done\n";
  return s;
}

}  // namespace rdmacheck::lab
