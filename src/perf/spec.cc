#include "perf/spec.h"

#include <fmt/core.h>

#include <algorithm>

#include "proto/messages.h"

namespace rdmacheck::perf {

std::optional<std::string> validate(const Spec& s) {
  if (!proto::op_allowed_on(s.op, s.transport)) {
    return fmt::format("{} cannot carry {} (UC: send/write/write_imm; UD: send only)",
                       name_of(s.transport), name_of(s.op));
  }
  if (s.sizes.empty()) return "no message size";
  for (uint32_t size : s.sizes) {
    if (size < 1 || size > proto::kMaxMessageSize) {
      return fmt::format("message size {} is outside 1..{}", size, proto::kMaxMessageSize);
    }
    if (is_atomic(s.op) && size != kAtomicSize) {
      return fmt::format("atomics move exactly {} bytes, not {}", kAtomicSize, size);
    }
    if (!proto::op_allowed_in(s.op, s.kind)) {
      std::string kinds;
      for (Kind k : {Kind::kBw, Kind::kLat}) {
        if (proto::op_allowed_in(s.op, k))
          kinds += (kinds.empty() ? "" : "/") + std::string(name_of(k));
      }
      return fmt::format("{} measures {}; {} is a {} operation", name_of(s.kind),
                         proto::op_choices(s.kind), name_of(s.op), kinds);
    }
  }
  if (s.sizes.size() > proto::kMaxSizes) {
    return fmt::format("at most {} sizes per run", proto::kMaxSizes);
  }
  if ((s.iterations == 0) == (s.duration_s <= 0)) {
    return "give either iterations (-n) or a duration (-D), not both";
  }
  if (s.iterations > (1ull << 40)) return "too many iterations";
  if (s.warmup_s > 0 && s.duration_s <= 0) {
    return "--warmup is the start of a -D run that is not counted: add -D (with -n every "
           "message counts, as in perftest)";
  }
  if (s.run_infinitely) {
    if (s.kind != Kind::kBw) return "--run_infinitely is a bw mode (lat keeps every sample)";
    if (s.sizes.size() != 1) return "--run_infinitely runs one size: give one -s, not -a";
    if (s.bidir) return "--run_infinitely measures one direction: drop -b";
    if (s.validate) return "--run_infinitely has no end to validate at: drop --validate";
  }
  if (s.duration_s > 3600 || s.warmup_s < 0 || s.warmup_s >= std::max(s.duration_s, 0.0) + 3600) {
    return "duration must be at most 3600 s";
  }
  if (s.duration_s > 0 && s.warmup_s >= s.duration_s) {
    return "the warm-up must be shorter than the duration";
  }
  if (s.qps < 1 || s.qps > 16) return "queue pairs (-q) must be 1..16";
  if (s.tx_depth < 1 || s.tx_depth > proto::kMaxDepth) {
    return fmt::format("tx depth must be 1..{}", proto::kMaxDepth);
  }
  if (s.rx_depth < 1 || s.rx_depth > proto::kMaxDepth) {
    return fmt::format("rx depth must be 1..{}", proto::kMaxDepth);
  }
  if (s.post_list < 1 || s.post_list > s.tx_depth) return "post list must be 1..tx depth";
  if (s.cq_mod < 1 || s.cq_mod > s.tx_depth || s.tx_depth % s.cq_mod != 0) {
    return "CQ moderation must divide the tx depth";
  }
  if (s.inline_size > 1024) return "inline size must be at most 1024 bytes";
  if (s.bidir && s.kind != Kind::kBw) return "-b is a bandwidth mode; lat is a ping-pong already";
  return std::nullopt;
}

Spec spec_of(const proto::TestSpec& test) {
  Spec s;
  s.kind = test.kind;
  s.op = test.op;
  s.transport = test.transport;
  s.rx_depth = test.depth;
  if (const auto& p = test.perf) {
    s.sizes = p->sizes;
    s.iterations = p->iterations;
    s.duration_s = p->duration_ms / 1000.0;
    s.bidir = p->bidir;
    s.validate = p->validate;
    s.tx_depth = p->tx_depth;
    s.post_list = p->post_list;
    s.cq_mod = p->cq_mod;
    s.inline_size = p->inline_size;
  }
  return s;
}

std::vector<uint32_t> all_sizes(uint32_t max_size) {
  std::vector<uint32_t> v;
  for (uint64_t s = 2; s <= max_size; s *= 2) v.push_back(static_cast<uint32_t>(s));
  return v;
}

uint32_t max_size(const Spec& s) {
  return s.sizes.empty() ? 0 : *std::max_element(s.sizes.begin(), s.sizes.end());
}

}  // namespace rdmacheck::perf
