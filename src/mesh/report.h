// The mesh's report on rank 0: every probe, the rounds' timing, the hosts'
// doctor summary and the analysis; one JSON document (schemas/mesh.schema.json)
// and one text rendering of it.
#pragma once

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/text_style.h"
#include "base/version.h"
#include "conn/target.h"
#include "findings/finding.h"
#include "mesh/analysis.h"
#include "mesh/probe.h"
#include "mesh/probe_result.h"

namespace rdmacheck::mesh {

constexpr int kSchemaVersion = rdmacheck::kSchemaVersion;  // one for every document

struct MeshOptions {
  bool quick = false;  // RC bring-up and pings only
  ProbeSettings probe;
  std::chrono::seconds round_timeout{60};  // every round ends by then, whatever a pair does
  conn::DeviceChoice dev;
};

struct RoundTiming {
  int round = 0;
  int pairs = 0;
  double seconds = 0;
};

struct MeshReport {
  MeshOptions options;
  std::vector<std::string> hosts;          // by rank
  std::vector<std::string> server_errors;  // by rank: why its in-process server did not start ("")
  std::vector<Probe> probes;               // both directions of every pair
  std::vector<RoundTiming> rounds;
  std::vector<Finding> doctor;  // each host's doctor, summarised over the fleet
  Analysis analysis;
  double elapsed_s = 0;
};

// 0 healthy, 1 a performance outlier, 2 a pair or host that failed. The
// doctor's findings explain; the traffic decides.
int exit_status(const MeshReport& r);

// The two printers every report has (output/print.h writes one of them).
nlohmann::json to_json(const MeshReport& r);
std::string format_text(const MeshReport& r, const TextStyle& style = {});

}  // namespace rdmacheck::mesh
