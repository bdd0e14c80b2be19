#include "cli/target_options.h"

#include "proto/messages.h"

namespace rdmacheck::cli {

bool DevPort::subject(const std::string& dev_or_port) const {
  if (dev.empty()) return true;
  const auto slash = dev_or_port.find('/');
  if (dev_or_port.substr(0, slash) != dev) return false;
  return port == 0 || slash == std::string::npos ||
         dev_or_port.substr(slash + 1) == std::to_string(port);
}

void add_dev_port(CLI::App& app, DevPort& f) {
  app.add_option_function<std::string>(
         "dev",
         [&f](const std::string& v) {
           const auto slash = v.find('/');
           f.dev = v.substr(0, slash);
           if (slash != std::string::npos) f.port = std::stoi(v.substr(slash + 1));
         },
         "only this device, or this port of it: DEV[/PORT] (as 'rdma dev show mlx5_0/1')")
      ->check(CLI::Validator(
          [](const std::string& v) -> std::string {
            const auto slash = v.find('/');
            const std::string port = slash == std::string::npos ? "1" : v.substr(slash + 1);
            if (v.substr(0, slash).empty() || port.empty() || port.size() > 3 ||
                port.find_first_not_of("0123456789") != std::string::npos || port == "0") {
              return "'" + v + "' is not DEV or DEV/PORT (e.g. mlx5_0 or mlx5_0/1)";
            }
            return {};
          },
          "DEV[/PORT]"));
}

std::string missing(const DevPort& f, const std::vector<DeviceInfo>& devices) {
  if (f.dev.empty()) return {};
  std::string names;
  for (const auto& d : devices) {
    names += (names.empty() ? "" : ", ") + d.name;
    if (d.name != f.dev) continue;
    if (f.port == 0) return {};
    for (const auto& p : d.ports) {
      if (p.port == f.port) return {};
    }
    return "device " + f.dev + " has no port " + std::to_string(f.port);
  }
  return "no RDMA device '" + f.dev + "' here (" + (names.empty() ? "none" : names) + ")";
}

void add_device_options(CLI::App& app, conn::DeviceChoice& dev) {
  app.add_option("-d,--device,--ib-dev", dev.device,
                 "RDMA device (default: the one whose netdev routes to the peer, else the first "
                 "ACTIVE one)");
  app.add_option("-i,--ib-port", dev.ib_port,
                 "device port, as perftest's -i (default: the port of the device that routes to "
                 "the peer, else the first ACTIVE one)")
      ->check(CLI::Validator(
          [](const std::string& v) -> std::string {
            if (v.find_first_not_of("0123456789") == std::string::npos && !v.empty()) return {};
            return "-i is the device port (an integer), as in perftest; ping's interval is "
                   "--interval SECONDS";
          },
          "PORT"))
      ->check(CLI::Range(0, 255));
  app.add_option("-x,--gid-index", dev.gid_index,
                 "GID index (default: the RoCE v2 GID of the address that routes to the peer)")
      ->check(CLI::Range(0, 65535));
}

void add_key_options(CLI::App& app, conn::Target& t) {
  app.add_option("--psk-file", t.psk_file,
                 "this client's key for the server (serve --psk-file): its line of "
                 "the server's key ring (rdmacheck keygen prints it), or the "
                 "server's raw key; only its owner may read it")
      ->envname("RDMACHECK_PSK_FILE");
  auto* cert = app.add_option("--tls-cert", t.tls_cert,
                              "certificate mode (serve --tls-cert): this client's certificate "
                              "(PEM, then its chain); with --tls-key and --tls-ca; it takes the "
                              "place of --psk-file and RDMACHECK_PSK_FILE")
                   ->envname("RDMACHECK_TLS_CERT");
  app.add_option("--tls-key", t.tls_key, "the private key of --tls-cert (PEM)")
      ->envname("RDMACHECK_TLS_KEY")
      ->needs(cert);
  app.add_option("--tls-ca", t.tls_ca,
                 "the CA that signs the server's certificate (PEM); the certificate must name "
                 "the host given")
      ->envname("RDMACHECK_TLS_CA")
      ->needs(cert);
  cert->needs(app.get_option("--tls-key"))->needs(app.get_option("--tls-ca"));
}

void add_target_options(CLI::App& app, conn::Target& t, TargetFlags f) {
  t.fs = FsRoot::live();  // a client test reads this host's own devices and counters
  auto* host = app.add_option("host", t.host, "the host running 'rdmacheck serve'")
                   ->check(CLI::Validator(
                       [](const std::string& v) -> std::string {
                         const auto colon = v.rfind(':');
                         if (colon == std::string::npos || v.find(':') != colon) return {};
                         const std::string port = v.substr(colon + 1);
                         if (port.empty() || port.find_first_not_of("0123456789") != port.npos) {
                           return {};
                         }
                         return "the port goes in -p: " + v.substr(0, colon) + " -p " + port;
                       },
                       "HOST"));
  if (!f.perftest) host->required();
  app.add_option("-p,--port", t.tcp_port, "the server's TCP port")
      ->default_val(proto::kDefaultPort)
      ->check(CLI::Range(1, 65535));
  add_device_options(app, t.dev);
  app.add_option(f.perftest ? "--tclass" : "-T,--tclass", t.traffic_class,
                 "GRH traffic class of the test's packets, on both hosts' QPs (RoCE v2: DSCP "
                 "<< 2, e.g. 106 for DSCP 26)")
      ->check(CLI::Range(0, 255));
  if (f.perftest) {
    app.add_option("-T,--tos", t.tos,
                   "with -R/--cm: the ToS of the rdma_cm connection (0..255), as perftest's "
                   "-T/--tos; the traffic class of any QP is --tclass")
        ->check(CLI::Range(0, 255));
  }
  app.add_option("-S,--sl", t.sl, "service level of both hosts' QPs, as perftest's -S")
      ->check(CLI::Range(0, 15));
  add_key_options(app, t);
  if (f.path_mtu) {
    app.add_option("-m,--mtu", t.path_mtu,
                   "path MTU of both QPs in bytes (256, 512, 1024, 2048, 4096), as perftest's -m; "
                   "the ports' active MTU caps it (a warning says so)")
        ->check(CLI::IsMember({256, 512, 1024, 2048, 4096}));
  }
  if (f.src) {
    app.add_option(
        f.perftest ? "--src,--source_ip" : "--src", t.src,
        "with --cm: the local address to resolve from (several NICs); the server accepts "
        "the request only from the address the control connection leaves from");
  }
}

}  // namespace rdmacheck::cli
