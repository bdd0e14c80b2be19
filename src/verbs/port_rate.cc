#include "verbs/port_rate.h"

namespace rdmacheck::verbs {

double port_rate_gbps(const ibv_port_attr& a) {
  // ibv_query_port's width and speed encodings (see ibv_query_port(3)).
  double lanes = 0;
  switch (a.active_width) {
    case 1:
      lanes = 1;
      break;
    case 2:
      lanes = 4;
      break;
    case 4:
      lanes = 8;
      break;
    case 8:
      lanes = 12;
      break;
    case 16:
      lanes = 2;
      break;
    default:
      return 0;
  }
  double per_lane = 0;
  switch (a.active_speed) {
    case 1:
      per_lane = 2.5;
      break;  // SDR
    case 2:
      per_lane = 5;
      break;  // DDR
    case 4:
    case 8:
      per_lane = 10;
      break;  // QDR, FDR10
    case 16:
      per_lane = 14;
      break;  // FDR (sysfs: 56 Gb/sec 4X FDR)
    case 32:
      per_lane = 25;
      break;  // EDR
    case 64:
      per_lane = 50;
      break;  // HDR
    case 128:
      per_lane = 100;
      break;  // NDR
    default:
      break;
  }
  return lanes * per_lane;
}

}  // namespace rdmacheck::verbs
