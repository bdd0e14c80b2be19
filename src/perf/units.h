// How a figure reads in text: the unit a reader expects and three
// significant digits. The JSON keeps one unit per key (mpps, avg_gbps);
// only the text chooses.
#pragma once

#include <string>

namespace rdmacheck::perf {

// "5.24", "52.4", "524", "0.0140", "0": three significant digits, no exponent.
std::string significant(double v);

// A message rate given in Mpps (as BwSample and the JSON carry it) in the
// largest of Mpps, kpps and pps it reaches 1 in: "12.3 Mpps", "500 kpps",
// "4.00 kpps", "202 pps", "0 pps". A 64 KiB test on Soft-RoCE moves a few
// hundred messages a second, which "0.000 Mpps" hid.
std::string rate_text(double mpps);

// Bandwidth stays in Gb/s, the field's unit, so figures of one report
// compare at a glance; three significant digits keep a slow link's
// "0.0140 Gb/s" from reading as 0.
std::string gbps_text(double gbps);

}  // namespace rdmacheck::perf
