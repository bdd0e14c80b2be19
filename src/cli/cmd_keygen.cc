#include <cstdio>
#include <memory>

#include "base/atomic_file.h"
#include "cli/command.h"
#include "proto/key_ring.h"

namespace rdmacheck::cli {

Runner attach_keygen(CLI::App& app) {
  struct Opts {
    std::string identity;
    std::string ring;
    std::string out;
  };
  auto o = std::make_shared<Opts>();
  app.add_option("identity", o->identity,
                 "the client's identity: its host name, address or user@host (the name the "
                 "server logs for its sessions)")
      ->required();
  app.add_option("--ring", o->ring,
                 "the server's key ring to add the client to (created 0600 when missing)");
  app.add_option("-o,--out", o->out,
                 "write the client's key file here (0600) instead of printing it");
  app.footer(
      "Makes a fresh 32-byte key for one client. On the server:\n"
      "  rdmacheck keygen client1 --ring /etc/rdmacheck/ring -o client1.key\n"
      "  rdmacheck serve --psk-file /etc/rdmacheck/ring        (kill -HUP it to re-read)\n"
      "copy client1.key to client1 (mode 600, e.g. scp -p) and there run\n"
      "  rdmacheck check SERVER --psk-file client1.key\n"
      "Revoke: delete the client's line from the ring, then kill -HUP the server.\n"
      "Without --ring, only the client line is made (add it to a ring yourself).\n"
      "Exit status: 0, or 2 with one line on stderr (an identity already in the ring, an\n"
      "unsafe ring, a file that cannot be written).");
  return [o]() {
    std::string line;
    if (!o->ring.empty()) {
      auto added = proto::add_to_ring(o->ring, o->identity);
      if (!added) {
        std::fprintf(stderr, "rdmacheck keygen: %s\n", added.error().message().c_str());
        return 2;
      }
      line = std::move(*added);
    } else {
      if (!proto::valid_identity(o->identity)) {
        std::fprintf(stderr, "rdmacheck keygen: '%s' is not a host name, an address or user@host\n",
                     o->identity.substr(0, 40).c_str());
        return 2;
      }
      line = proto::ring_line(o->identity, proto::fresh_key());
    }
    if (o->out.empty()) {
      std::fputs(line.c_str(), stdout);
    } else if (auto s = write_secret_atomically(o->out, line); !s) {
      std::fprintf(stderr, "rdmacheck keygen: %s\n", s.error().message().c_str());
      return 2;
    }
    if (!o->ring.empty()) {
      std::fprintf(stderr,
                   "rdmacheck keygen: added '%s' to %s; a running serve reads it on "
                   "SIGHUP\n",
                   o->identity.c_str(), o->ring.c_str());
    }
    return 0;
  };
}

}  // namespace rdmacheck::cli
