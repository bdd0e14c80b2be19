#include "host/ticket.h"

#include <link.h>

#include <cctype>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <string_view>

#include "base/version.h"

namespace rdmacheck {
namespace {

constexpr const char* kUnknown = "unknown";

int collect_ibverbs(struct dl_phdr_info* info, size_t /*size*/, void* data) {
  const std::string name = info->dlpi_name != nullptr ? info->dlpi_name : "";
  if (std::filesystem::path(name).filename().string().rfind("libibverbs.so", 0) != 0) return 0;
  *static_cast<std::string*>(data) = name;
  return 1;  // found: stop iterating
}

bool needs_quotes(const std::string& s) {
  if (s.empty()) return true;
  for (char c : s) {
    const bool plain = (std::isalnum(static_cast<unsigned char>(c)) != 0) ||
                       std::string_view("-_./=:,@%+").find(c) != std::string_view::npos;
    if (!plain) return true;
  }
  return false;
}

std::string or_unknown(const std::string& s) { return s.empty() ? kUnknown : s; }

}  // namespace

std::string rdma_core_version_from_file(const std::string& path) {
  const std::string file = std::filesystem::path(path).filename().string();
  const std::string prefix = "libibverbs.so.1.";
  if (file.rfind(prefix, 0) != 0) return {};
  // "<ABI>.<RELEASE>": the ABI minor, then the release (which has a dot itself: "44.0").
  const std::string rest = file.substr(prefix.size());
  const size_t dot = rest.find('.');
  if (dot == std::string::npos || dot == 0) return {};
  std::string release = rest.substr(dot + 1);
  if (release.empty() || release.find_first_not_of("0123456789.") != std::string::npos) return {};
  return release;
}

std::string loaded_rdma_core_version() {
  std::string loaded;
  ::dl_iterate_phdr(collect_ibverbs, &loaded);
  if (loaded.empty()) return kUnknown;
  std::error_code ec;
  const auto real = std::filesystem::canonical(loaded, ec);
  return or_unknown(ec ? "" : rdma_core_version_from_file(real.string()));
}

std::string iso8601_utc(std::chrono::system_clock::time_point t) {
  const std::time_t secs = std::chrono::system_clock::to_time_t(t);
  std::tm tm{};
  ::gmtime_r(&secs, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string quote_command_line(int argc, const char* const* argv) {
  std::string out;
  for (int i = 0; i < argc; ++i) {
    std::string a = argv[i];
    if (i == 0) a = std::filesystem::path(a).filename().string();  // "rdmacheck", not the path
    if (needs_quotes(a)) {
      std::string q = "'";
      for (char c : a) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
      a = q + "'";
    }
    out += (out.empty() ? "" : " ") + a;
  }
  return out;
}

TicketHeader read_ticket_header(const FsRoot& fs, const TicketRun& run) {
  TicketHeader t;
  t.version = kVersionString;
  t.kernel = or_unknown(fs.read_line("/proc/sys/kernel/osrelease").value_or(""));
  t.rdma_core = or_unknown(run.rdma_core);
  t.timestamp = iso8601_utc(run.now);
  t.command_line = run.command_line;
  const std::string cls = "/sys/class/infiniband/";
  const auto names = run.devices.empty() ? fs.list(cls) : run.devices;
  for (const auto& name : names) {
    t.devices.push_back({.name = name,
                         .fw_ver = fs.read_line(cls + name + "/fw_ver").value_or(""),
                         .board_id = fs.read_line(cls + name + "/board_id").value_or("")});
  }
  return t;
}

nlohmann::json to_json(const TicketHeader& t) {
  nlohmann::json devices = nlohmann::json::array();
  for (const auto& d : t.devices) {
    devices.push_back({{"name", d.name}, {"fw_ver", d.fw_ver}, {"board_id", d.board_id}});
  }
  return {{"tool", "rdmacheck"},           {"version", t.version}, {"kernel", t.kernel},
          {"rdma_core", t.rdma_core},      {"devices", devices},   {"timestamp", t.timestamp},
          {"command_line", t.command_line}};
}

nlohmann::json with_ticket(nlohmann::json doc, const TicketHeader& t) {
  doc["schema_version"] = kSchemaVersion;
  doc["ticket"] = to_json(t);
  return doc;
}

std::string format_text(const TicketHeader& t) {
  std::string devices;
  for (const auto& d : t.devices) {
    devices += ", " + d.name + " fw " + (d.fw_ver.empty() ? "-" : d.fw_ver);
    if (!d.board_id.empty()) devices += " board " + d.board_id;
  }
  if (t.devices.empty()) devices = ", no RDMA device";
  return "rdmacheck " + t.version + ", kernel " + t.kernel + ", rdma-core " + t.rdma_core +
         devices + ", " + t.timestamp + "\ncommand: " + t.command_line + "\n\n";
}

}  // namespace rdmacheck
