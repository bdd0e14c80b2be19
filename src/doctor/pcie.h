// PCIe link arithmetic: what a link of a given speed and width can carry.
#pragma once

#include <string>

namespace rdmacheck::doctor {

struct PcieLink {
  double gts = 0;  // transfer rate per lane, GT/s; 0 when unknown
  int width = 0;   // lanes; 0 when unknown
  [[nodiscard]] bool known() const { return gts > 0 && width > 0; }
};

// "8.0 GT/s PCIe", "8 GT/s", "2.5 GT/s" -> GT/s; "Unknown" -> 0.
double parse_gts(const std::string& text);
// 1 for 2.5 GT/s ... 6 for 64 GT/s; 0 when not a PCIe rate.
int pcie_gen(double gts);
// Line-code efficiency: 8b/10b up to Gen2, 128b/130b Gen3-5, 242/256 FLIT at Gen6.
double encoding_efficiency(double gts);
// Usable data rate in Gb/s before TLP/DLLP overhead: GT/s x lanes x efficiency.
double usable_gbps(const PcieLink& l);
// "Gen3 x8 (8.0 GT/s)".
std::string describe(const PcieLink& l);

}  // namespace rdmacheck::doctor
