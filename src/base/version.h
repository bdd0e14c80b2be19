#pragma once

namespace rdmacheck {
inline constexpr const char* kVersionString = "0.1.0";
}  // namespace rdmacheck
