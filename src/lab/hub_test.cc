#include "lab/hub.h"

#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <cstring>
#include <filesystem>

#include "testing/temp_dir.h"

namespace rdmacheck::lab {
namespace {

sockaddr_un addr_of(const std::string& path) {
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  std::memcpy(a.sun_path, path.c_str(), path.size());
  return a;
}

// A guest's end of its wire, as QEMU's -netdev dgram binds it.
Fd bind_guest(const std::string& path) {
  Fd fd(::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  const sockaddr_un a = addr_of(path);
  EXPECT_EQ(::bind(fd.get(), reinterpret_cast<const sockaddr*>(&a), sizeof a), 0) << path;
  return fd;
}

void send_to(const Fd& from, const std::string& hub, const std::string& frame) {
  const sockaddr_un a = addr_of(hub);
  ASSERT_EQ(::sendto(from.get(), frame.data(), frame.size(), 0,
                     reinterpret_cast<const sockaddr*>(&a), sizeof a),
            static_cast<ssize_t>(frame.size()));
}

std::string receive(const Fd& fd) {
  pollfd p{fd.get(), POLLIN, 0};
  if (::poll(&p, 1, 10000) != 1) return "(nothing within 10 s)";
  char buf[256];
  const ssize_t n = ::recv(fd.get(), buf, sizeof buf, 0);
  return n < 0 ? "(recv failed)" : std::string(buf, static_cast<size_t>(n));
}

// Two wires of two NICs each: a frame reaches the other NIC of its own wire
// and never a NIC of the other wire.
TEST(Hub, ForwardsOnlyWithinAWire) {
  const auto dir = test_util::make_temp_dir("hub");
  std::vector<std::string> hubs;
  std::vector<std::string> guests;
  for (const char* n : {"h1-1", "h2-1", "h1-2", "h2-2"}) {
    hubs.push_back((dir / (std::string("hub-") + n + ".sock")).string());
    guests.push_back((dir / (std::string(n) + ".sock")).string());
  }
  std::vector<Fd> g;
  for (const auto& p : guests) g.push_back(bind_guest(p));
  auto hub = Hub::start(hubs, guests, {1, 1, 2, 2});
  ASSERT_TRUE(hub.ok()) << hub.error().message();

  send_to(g[0], hubs[0], "on wire 1");
  EXPECT_EQ(receive(g[1]), "on wire 1");
  send_to(g[2], hubs[2], "on wire 2");
  // h2-2's first frame is wire 2's: wire 1's frame never reached it.
  EXPECT_EQ(receive(g[3]), "on wire 2");
  EXPECT_EQ((*hub)->frames_from(0), 1u);
  EXPECT_EQ((*hub)->frames_from(2), 1u);
  for (size_t i = 0; i < 4; ++i) EXPECT_EQ((*hub)->unheard_to(i), 0u) << i;
  EXPECT_FALSE(Hub::start(hubs, guests, {1, 2}).ok()) << "a wire for each port";
  hub->reset();
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace rdmacheck::lab
