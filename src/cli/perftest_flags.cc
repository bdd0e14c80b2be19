#include "cli/perftest_flags.h"

#include <fmt/core.h>

#include <CLI/CLI.hpp>

#include "cli/command.h"

namespace rdmacheck::cli {
namespace {

// Read from perftest 4.5-0.20 (Debian 12), src/perftest_parameters.c.
constexpr PerftestFlag kFlags[] = {
    {"-d --ib-dev, -i --ib-port, -x --gid-index", "the same (also --device)",
     "without them rdmacheck takes the device, port and RoCE v2 GID that route to the peer; "
     "perftest the first device, port 1, GID 0"},
    {"-p --port", "the same", "the server's TCP port, 4792 by default (perftest 18515)"},
    {"-s --size, -a --all, -n --iters, -D --duration", "the same",
     "-s takes units and lists (4k,1M); lat -D too"},
    {"--run_infinitely", "the same (also --run-infinitely), bw only",
     "a line every -D seconds (default 5) until Ctrl-C, then the report of the whole run"},
    {"-q --qp, -t --tx-depth, -r --rx-depth, -l --post_list, -I --inline_size, -b "
     "--bidirectional",
     "the same", ""},
    {"-Q --cq-mod", "the same",
     "-t is rounded up to a multiple of -Q (-Q above -t becomes -t); without -Q the largest of "
     "64, 32, ... 1 that divides -t (perftest: 100)"},
    {"-c --connection RC, UC, UD", "the same", "-c UD on bw means --op send, as ib_send_bw"},
    {"-R --rdma_cm", "-R --cm (also --rdma_cm)", "connects the RC QPs through librdmacm"},
    {"-T --tos", "the same", "the ToS of the rdma_cm connection, with -R only (as perftest)"},
    {"--tclass, -S --sl", "the same (--tclass has no short flag)",
     "on both hosts' QPs, read back after RTR"},
    {"-m --mtu, -u --qp-timeout", "the same (also --qp_timeout)",
     "-u applies to both QPs; without it it is derived from the round trip (at least 16)"},
    {"--output bandwidth, latency, message_rate", "the same",
     "as perftest: MiB/s (Gb/s with --report_gbits), the average us, Mpps"},
    {"--report_gbits", "the same (also --report-gbits)",
     "changes --output bandwidth; the table shows both units"},
    {"-H --report-histogrm", "-H --histogram (also --report-histogram, --report-histogrm)", ""},
    {"--cpu_util, -F --CPU-freq, -V --version", "the same",
     "-F changes nothing: 'rdmacheck doctor' reports the CPU governor"},
    {"--out_json --out_json_file", "--json-file FILE (also --out_json_file)",
     "--out_json alone is refused: it needs the file"},
    {"-j --source_ip", "--src ADDR (also --source_ip), with -R; -j is --json here (iproute2's)",
     "the local address rdma_cm resolves from"},
    {"-f --margin", "--warmup SECONDS, with -D", "seconds not counted at the start"},
    {"-e --events", "the same, bw only",
     "the client sleeps on its completion channel (the server's receiver always does); lat "
     "busy-polls, since a wakeup would be inside every round trip"},
    {"-X --vector", "", "the completion queues use completion vector 0"},
    {"-o --outs", "", "outstanding reads and atomics are not tuneable"},
    {"-g --mcg, -M --MGID, --raw_mcast", "", "multicast is not tested"},
    {"-z --comm_rdma_cm", "",
     "the control channel is rdmacheck's own TCP session; -R connects "
     "the QPs through rdma_cm"},
    {"-L --hop_limit, -B --source_mac, -E --dest_mac, -J --dest_ip, -K --dest_port, -k "
     "--source_port, -Y --ethertype, -v --mac_fwd, -G --use_rss, --flows, --flows_burst, "
     "--promiscuous, --sniffer, --raw_ipv6, --local_ip, --remote_ip, --local_mac, "
     "--remote_mac, --local_port, --remote_port, --reply_every",
     "", "raw Ethernet QPs are not tested"},
    {"-w --limit_bw, -y --limit_msgrate, --rate_limit, --rate_limit_type, --rate_units, "
     "--burst_size, --typical_pkt_size",
     "", "tests run at full rate; the server caps what it sends with serve --max-rate"},
    {"-O --dualport, --report-per-port", "", "one port a test: run one test per port with -i"},
    {"-A --atomic_type", "--op atomic_fadd or atomic_cswap", ""},
    {"-N --noPeak, -C --report-cycles, -U --report-unsorted, --report-both, --reversed", "",
     "the report is fixed: peak and average, microseconds, sorted percentiles"},
    {"-W --report-counters", "", "the port's counters are read around every test already"},
    {"--use_cuda, --use_cuda_bus_id, --use_cuda_dmabuf, --use_rocm, --mmap, --mmap-offset, "
     "--use_hugepages, --odp, --payload_file_path",
     "", "buffers are ordinary pinned host memory"},
    {"--use-srq, --mr_per_qp, --use_old_post_send, --latency_gap, --wait_destroy", "",
     "one QP, one MR and one buffer a session; not tuneable"},
    {"--pkey_index, --dlid, --flow_label, --force-link", "",
     "taken from the port and the route (InfiniBand partitions are not chosen here)"},
    {"--retry_count", "",
     "RC retries are rdmacheck's own, bounded, so a dead path is named in seconds"},
    {"--tcp, --ipv6, --dont_xchg_versions, -Z --server, -P --client", "",
     "the control channel is rdmacheck's TCP session (IPv4 or IPv6 as HOST resolves); the "
     "server is `rdmacheck serve`"},
    {"--perform_warm_up", "--warmup SECONDS, with -D", ""},
};

// The spellings of ROW: "-e --events, -X --vector" -> {"-e", "--events", "-X", "--vector"}.
std::vector<std::string> spellings(const PerftestFlag& row) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : row.perftest) {
    if (c == ' ' || c == ',') {
      if (cur.rfind('-', 0) == 0) out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (cur.rfind('-', 0) == 0) out.push_back(cur);
  return out;
}

}  // namespace

std::span<const PerftestFlag> perftest_flags() { return kFlags; }

std::optional<std::string> perftest_hint(std::string_view arg) {
  const std::string flag(arg.substr(0, arg.find('=')));
  for (const auto& row : kFlags) {
    // A flag rdmacheck spells the same is the same: where this command lacks
    // it (lat -b), CLI11's own error says so; a bw-only one says so itself.
    if (row.here.rfind("the same", 0) == 0 && row.here.find("bw only") == std::string::npos) {
      continue;
    }
    for (const auto& s : spellings(row)) {
      if (s != flag) continue;
      if (row.here.empty()) return fmt::format("perftest's {} is not offered: {}", flag, row.note);
      return fmt::format("perftest's {} is here {}{}{}", flag, row.here,
                         row.note.empty() ? "" : ": ", row.note);
    }
  }
  return std::nullopt;
}

std::string perftest_flags_markdown() {
  std::string out =
      "# perftest's flags in `rdmacheck bw` and `rdmacheck lat`\n\n"
      "Generated by `rdmacheck perftest-flags` from the table in `src/cli/perftest_flags.cc`\n"
      "(a test fails when this file is stale). The reference is Debian 12's perftest\n"
      "4.5-0.20. A perftest flag bw/lat do not take is refused with the hint below.\n\n"
      "| perftest | rdmacheck | note |\n| --- | --- | --- |\n";
  for (const auto& row : kFlags) {
    out += fmt::format("| `{}` | {} | {} |\n", row.perftest,
                       row.here.empty() ? "not offered" : std::string(row.here), row.note);
  }
  return out;
}

Runner attach_perftest_flags(CLI::App& app) {
  app.description("print docs/perftest-flags.md: perftest's flags and their meaning here");
  return [] {
    std::fputs(perftest_flags_markdown().c_str(), stdout);
    return 0;
  };
}

}  // namespace rdmacheck::cli
