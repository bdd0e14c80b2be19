// The running lab's control socket: `rdmacheck lab fault add|clear|list`
// from another shell changes the switch's faults while a test runs. A unix
// stream socket in the lab's work directory (owner-only, as the directory),
// one request line per connection, one reply; the lab answers between its
// other work and gives a client at most a second.
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "base/fd.h"
#include "base/result.h"
#include "lab/hub.h"
#include "lab/plan.h"

namespace rdmacheck::lab {

constexpr const char* kControlSocket = "control.sock";

// Listens on DIR/control.sock (non-blocking).
Result<Fd> listen_control(const std::filesystem::path& dir);

// What the lab answers to one request line: "add SPEC" (a switch fault, from
// now on), "clear" (every switch fault; the counters stay), "list" (each
// port's faults and what they did). The reply's first word is "ok" or "error:".
std::string control_reply(Hub& hub, const std::vector<WirePort>& ports, int hosts, int nics,
                          const std::string& line);

// Accepts one client on LISTENER if one waits, reads its line (1 s at most),
// answers with REPLY(line) and closes. False when no client was waiting.
bool serve_control_once(const Fd& listener,
                        const std::function<std::string(const std::string&)>& reply);

// The client's side: sends LINE to the lab at SOCKET, returns its reply (5 s at most).
Result<std::string> control_request(const std::filesystem::path& socket, const std::string& line);

// The control socket of the lab in WORKDIR, or (WORKDIR empty) of the one
// lab running under $TMPDIR; an error names what was found instead.
Result<std::filesystem::path> find_lab_control(const std::string& workdir);

}  // namespace rdmacheck::lab
