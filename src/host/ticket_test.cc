#include "host/ticket.h"

#include <gtest/gtest.h>

#include <fstream>

#include "base/version.h"
#include "testing/temp_dir.h"

namespace rdmacheck {
namespace {

const std::string kFixtures = RDMACHECK_FIXTURES;

void write(const std::filesystem::path& p, const std::string& text) {
  std::filesystem::create_directories(p.parent_path());
  std::ofstream(p) << text << "\n";
}

// 2026-12-01 10:59:47 UTC
const auto kNow = std::chrono::system_clock::from_time_t(1796122787);

TEST(Ticket, RdmaCoreReleaseIsLibibverbsFileTail) {
  // Debian 12's libibverbs1 44.0-2 and a newer upstream build.
  EXPECT_EQ(rdma_core_version_from_file("/usr/lib/x86_64-linux-gnu/libibverbs.so.1.14.44.0"),
            "44.0");
  EXPECT_EQ(rdma_core_version_from_file("/usr/lib64/libibverbs.so.1.14.50.1"), "50.1");
  // The soname link and the dev link do not say which release.
  EXPECT_EQ(rdma_core_version_from_file("/usr/lib/x86_64-linux-gnu/libibverbs.so.1"), "");
  EXPECT_EQ(rdma_core_version_from_file("libibverbs.so"), "");
  EXPECT_EQ(rdma_core_version_from_file("librdmacm.so.1.3.44.0"), "");
  EXPECT_EQ(rdma_core_version_from_file("libibverbs.so.1.14.git"), "");
}

TEST(Ticket, LoadedRdmaCoreIsTheLinkedLibrary) {
  // The unit tests link libibverbs as rdmacheck does: its release is readable
  // from the file the loader mapped, and matches the soname link on disk.
  const std::string v = loaded_rdma_core_version();
  EXPECT_NE(v, "unknown");
  EXPECT_NE(v.find('.'), std::string::npos) << v;
}

TEST(Ticket, TimestampIsIso8601Utc) {
  EXPECT_EQ(iso8601_utc(kNow), "2026-12-01T10:59:47Z");
  EXPECT_EQ(iso8601_utc(std::chrono::system_clock::from_time_t(0)), "1970-01-01T00:00:00Z");
}

TEST(Ticket, CommandLineQuotesWhatTheShellWouldSplit) {
  const char* argv[] = {"/usr/bin/rdmacheck", "check",      "h2",  "-T", "106", "--html",
                        "my report.html",     "--psk-file", "it's"};
  EXPECT_EQ(quote_command_line(9, argv),
            "rdmacheck check h2 -T 106 --html 'my report.html' --psk-file 'it'\\''s'");
  const char* v6[] = {"rdmacheck", "ping", "fe80::1%eth0", ""};
  EXPECT_EQ(quote_command_line(4, v6), "rdmacheck ping fe80::1%eth0 ''");
}

// A tree in the layout sysfs documents (Documentation/ABI/stable/
// sysfs-class-infiniband: fw_ver, board_id under /sys/class/infiniband/DEV).
TEST(Ticket, ReadsKernelFirmwareAndBoardOfTheDevicesUsed) {
  const auto root = test_util::make_temp_dir("ticket");
  write(root / "proc/sys/kernel/osrelease", "6.1.0-57-amd64");
  write(root / "sys/class/infiniband/mlx5_0/fw_ver", "22.39.1002");
  write(root / "sys/class/infiniband/mlx5_0/board_id", "MT_0000000528");
  write(root / "sys/class/infiniband/mlx5_1/fw_ver", "22.39.1002");
  write(root / "sys/class/infiniband/mlx5_1/board_id", "MT_0000000528");
  const TicketRun run{.rdma_core = "44.0",
                      .command_line = "rdmacheck bw h2 -d mlx5_1",
                      .now = kNow,
                      .devices = {"mlx5_1"}};
  const TicketHeader t = read_ticket_header(FsRoot(root), run);
  EXPECT_EQ(t.version, kVersionString);
  EXPECT_EQ(t.kernel, "6.1.0-57-amd64");
  EXPECT_EQ(t.rdma_core, "44.0");
  ASSERT_EQ(t.devices.size(), 1u);  // only the device used
  EXPECT_EQ(t.devices[0].name, "mlx5_1");
  EXPECT_EQ(t.devices[0].fw_ver, "22.39.1002");
  EXPECT_EQ(t.devices[0].board_id, "MT_0000000528");
  EXPECT_EQ(format_text(t), std::string("rdmacheck ") + kVersionString +
                                ", kernel 6.1.0-57-amd64, rdma-core 44.0, mlx5_1 fw 22.39.1002 "
                                "board MT_0000000528, 2026-12-01T10:59:47Z\n"
                                "command: rdmacheck bw h2 -d mlx5_1\n\n");
  const auto j = to_json(t);
  EXPECT_EQ(j["devices"][0]["board_id"], "MT_0000000528");
  EXPECT_EQ(j["timestamp"], "2026-12-01T10:59:47Z");
  EXPECT_EQ(j["command_line"], "rdmacheck bw h2 -d mlx5_1");
  std::filesystem::remove_all(root);
}

// No device named: every device of the machine. The lab capture's rxe0 has
// no firmware and no board, and says so rather than printing empty fields.
TEST(Ticket, ListsEveryDeviceWhenNoneWasNamed) {
  const TicketHeader t = read_ticket_header(
      FsRoot(kFixtures + "/rxe-lab-doctor-healthy"),
      {.rdma_core = "", .command_line = "rdmacheck doctor", .now = kNow, .devices = {}});
  EXPECT_EQ(t.kernel, "6.1.0-57-amd64");
  EXPECT_EQ(t.rdma_core, "unknown");
  ASSERT_EQ(t.devices.size(), 1u);
  EXPECT_EQ(t.devices[0].name, "rxe0");
  EXPECT_NE(format_text(t).find(", rxe0 fw -, "), std::string::npos) << format_text(t);
}

TEST(Ticket, MissingKernelAndNoDevicesAreSaid) {
  const auto root = test_util::make_temp_dir("ticket-empty");
  const TicketHeader t = read_ticket_header(
      FsRoot(root),
      {.rdma_core = "44.0", .command_line = "rdmacheck devices", .now = kNow, .devices = {}});
  EXPECT_EQ(t.kernel, "unknown");
  EXPECT_NE(format_text(t).find(", no RDMA device, "), std::string::npos) << format_text(t);
  std::filesystem::remove_all(root);
}

}  // namespace
}  // namespace rdmacheck
