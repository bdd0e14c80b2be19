#include "lab/control.h"

#include <gtest/gtest.h>
#include <poll.h>

#include <thread>

#include "testing/temp_dir.h"

namespace rdmacheck::lab {
namespace {

// A two-host lab's hub (no guests: the control socket never needs them).
struct Fixture {
  std::filesystem::path dir = test_util::make_temp_dir("control");
  std::vector<WirePort> ports;
  std::unique_ptr<Hub> hub;
  Fixture() {
    LabOptions o;
    auto plan = make_plan(o);
    EXPECT_TRUE(plan.ok());
    ports = wire_ports(*plan);
    std::vector<std::string> hubs;
    std::vector<std::string> guests;
    for (const auto& p : ports) {
      hubs.push_back((dir / p.hub_socket).string());
      guests.push_back((dir / p.guest_socket).string());
    }
    auto h = Hub::start(hubs, guests);
    EXPECT_TRUE(h.ok());
    hub = std::move(*h);
  }
  ~Fixture() {
    hub.reset();
    std::filesystem::remove_all(dir);
  }
  std::string reply(const std::string& line) { return control_reply(*hub, ports, 2, 1, line); }
};

TEST(LabControl, AddListClearAndRefusals) {
  Fixture f;
  EXPECT_EQ(f.reply("list"), "ok: no switch faults");
  EXPECT_EQ(f.reply("add switch-loss:5@h2:in"), "ok: added switch-loss:5@h2:in");
  const std::string listed = f.reply("list");
  EXPECT_EQ(listed.rfind("ok\nh2: switch-loss:5@h2:in; towards h2 0 frames, dropped 0", 0), 0u)
      << listed;
  ASSERT_EQ(f.hub->switch_report(1).faults.size(), 1u) << "h2 is port 1";
  EXPECT_EQ(f.reply("clear"), "ok: no switch faults now (their counters stay)");
  EXPECT_TRUE(f.hub->switch_report(1).faults.empty());
  EXPECT_EQ(f.reply("add loss:1@h2"),
            "error: 'loss:1@h2': only a switch fault (switch-...) can be added to a running lab");
  EXPECT_NE(f.reply("add switch-loss:5@h3").find("error: lab: unknown host 'h3'"),
            std::string::npos);
  EXPECT_EQ(f.reply("drop everything"),
            "error: 'drop everything': expected add SWITCH-FAULT, clear or list");
  EXPECT_EQ(f.reply("clear now").rfind("error:", 0), 0u);
}

// Over the socket, as `rdmacheck lab fault` talks to a running lab; a lab
// directory without a socket is named.
TEST(LabControl, ARequestOverTheSocketGetsItsReply) {
  Fixture f;
  auto listener = listen_control(f.dir);
  ASSERT_TRUE(listener.ok()) << listener.error().message();
  std::thread lab([&] {
    // The lab's loop: poll, then answer whoever waits.
    for (int served = 0; served < 1;) {
      pollfd p{listener->get(), POLLIN, 0};
      if (::poll(&p, 1, 10000) != 1) return;
      while (serve_control_once(*listener, [&](const std::string& l) { return f.reply(l); })) {
        ++served;
      }
    }
  });
  auto found = find_lab_control(f.dir.string());
  ASSERT_TRUE(found.ok());
  auto r = control_request(*found, "add switch-delay:5@h1");
  lab.join();
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ(*r, "ok: added switch-delay:5@h1");
  EXPECT_EQ(f.hub->switch_report(0).faults.size(), 1u);
  const auto none = find_lab_control((f.dir / "nosuch").string());
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.error().message().find("no running lab in"), std::string::npos);
}

}  // namespace
}  // namespace rdmacheck::lab
