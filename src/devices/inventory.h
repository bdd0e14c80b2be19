// What `rdmacheck devices` shows: sysfs's view of every RDMA device, with the
// port MTUs and LID that only ibv_query_port knows, or why there is nothing.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/text_style.h"
#include "sysfs/fs_root.h"
#include "sysfs/rdma_sysfs.h"

namespace rdmacheck::devices {

struct Inventory {
  std::vector<DeviceInfo> devices;
  std::vector<std::string> why_none;  // reasons, when devices is empty
  std::vector<std::string> notes;     // e.g. a device sysfs shows but verbs cannot open
};

// Reads sysfs under fs; when query_verbs, also asks libibverbs for port MTUs.
Inventory take_inventory(const FsRoot& fs, bool query_verbs);

// Reasons there is no RDMA device, from what the machine shows (pure; tested).
std::vector<std::string> explain_no_devices(const FsRoot& fs);

nlohmann::json to_json(const Inventory& inv);
std::string format_text(const Inventory& inv, const TextStyle& style = {});

}  // namespace rdmacheck::devices
