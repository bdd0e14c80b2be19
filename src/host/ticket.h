// The facts a support ticket needs above any report, in text and JSON: which
// rdmacheck, kernel and rdma-core ran, the firmware and board of the devices
// it used, when, and the command line. print (output/print.h) puts it on every report.
#pragma once

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sysfs/fs_root.h"

namespace rdmacheck {

struct TicketDevice {
  std::string name;      // "mlx5_0"
  std::string fw_ver;    // sysfs fw_ver; empty when the device has none (rxe)
  std::string board_id;  // sysfs board_id (the PSID on Mellanox/NVIDIA cards); empty when none
};

struct TicketHeader {
  std::string version;    // rdmacheck's
  std::string kernel;     // the examined machine's osrelease, "unknown" when unreadable
  std::string rdma_core;  // "44.0", "unknown" when it cannot be told
  std::vector<TicketDevice> devices;
  std::string timestamp;     // ISO-8601 UTC, seconds: "2026-12-01T11:00:00Z"
  std::string command_line;  // shell-quoted where an argument needs it
};

// What the run itself knows; the machine's facts come from the FsRoot.
struct TicketRun {
  std::string rdma_core;     // loaded_rdma_core_version() in production
  std::string command_line;  // quote_command_line(argv)
  std::chrono::system_clock::time_point now;
  std::vector<std::string> devices;  // the devices used; empty: every device under the root
};

// Reads the kernel release and each device's fw_ver/board_id under FS.
TicketHeader read_ticket_header(const FsRoot& fs, const TicketRun& run);

// rdma-core names libibverbs' file libibverbs.so.1.<ABI>.<RELEASE>
// (libibverbs/CMakeLists.txt: "1 1.14.${PACKAGE_VERSION}"), so the release
// is the file name's tail: "libibverbs.so.1.14.44.0" -> "44.0"; "" otherwise.
std::string rdma_core_version_from_file(const std::string& path);
// The release of the libibverbs this process loaded (its real file, links
// followed), or "unknown".
std::string loaded_rdma_core_version();

std::string iso8601_utc(std::chrono::system_clock::time_point t);
// argv as one line a user can paste back into a shell.
std::string quote_command_line(int argc, const char* const* argv);

nlohmann::json to_json(const TicketHeader& t);
// A report's document as printed: its own keys, the schema_version
// (base/version.h) and the ticket (schemas/common.schema.json).
nlohmann::json with_ticket(nlohmann::json doc, const TicketHeader& t);
// Two lines: the versions, devices and time; then "command: ...".
std::string format_text(const TicketHeader& t);

}  // namespace rdmacheck
