// The mesh on every rank: its own server, its doctor, the rounds of the
// circle schedule (pings, then each way's bandwidth, a barrier between), and
// on rank 0 the report. Every wait is bounded by the round's deadline, so a
// dead pair costs its round's timeout, never the mesh.
#pragma once

#include <atomic>
#include <optional>

#include "mesh/control.h"
#include "mesh/report.h"

namespace rdmacheck::mesh {

// The report on rank 0; nullopt on the other ranks. Err: the run could not
// start (this rank's key file); every rank still takes part in the
// collectives, so no rank is left waiting.
std::optional<MeshReport> run_mesh(const MeshOptions& o, Control& c, const std::atomic<bool>& stop);

}  // namespace rdmacheck::mesh
