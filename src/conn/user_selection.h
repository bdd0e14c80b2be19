// What -d/--ib-port/-x select on this host and what rdmacheck picks without
// them, read from sysfs with the same choice functions the endpoint uses
// (device_choice.h), so that diagnose can put a failure down to a flag.
#pragma once

#include <string>
#include <vector>

#include "conn/diagnose.h"
#include "conn/target.h"
#include "sysfs/rdma_sysfs.h"

namespace rdmacheck::conn {

// LOCAL_ADDRESS: this host's address towards the peer (the TCP socket's).
// Nothing forced: only the flags (all false) are filled in.
UserSelection user_selection(const std::vector<DeviceInfo>& devices, const DeviceChoice& forced,
                             const std::string& local_address);

// --cm: what librdmacm needs here, read under FS (the character device
// rdma_ucm provides, the modules) and whether an RDMA device's GID table
// carries SOURCE, the address rdma_cm resolves from (--src when FORCED, else
// ROUTE_SOURCE, the TCP socket's local address).
CmHost cm_host(const FsRoot& fs, const std::vector<DeviceInfo>& devices, const std::string& source,
               bool forced, const std::string& route_source);

// What every client test (ping, bw, lat, check) records before diagnosing a
// failure: what -d/--ib-port/-x or --cm --src chose against what rdmacheck
// picks itself. LOCAL_ADDRESS: the TCP socket's ("" when it never connected).
void observe_choices(ConnObservation& obs, const Target& t, bool cm,
                     const std::string& local_address);

}  // namespace rdmacheck::conn
