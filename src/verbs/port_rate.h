// A port's link rate from ibv_query_port(3)'s encodings of its active width
// (lanes) and active speed (per lane), as sysfs's "rate" file spells them
// ("100 Gb/sec (4X EDR)").
#pragma once

#include <infiniband/verbs.h>

namespace rdmacheck::verbs {

// Gb/s; 0 when the width or the speed is one ibv_query_port(3) does not list.
double port_rate_gbps(const ibv_port_attr& a);

}  // namespace rdmacheck::verbs
