#include "conn/exposure.h"

#include <algorithm>

namespace rdmacheck::conn {
namespace {

size_t page_round(size_t n, size_t page) { return (n + page - 1) / page * page; }

}  // namespace

BufferLayout buffer_layout(size_t half, uint32_t recv_slots, size_t page) {
  BufferLayout l;
  l.send_bytes = half;
  l.recv_offset = page_round(std::max<size_t>(half, 1), page);
  l.recv_bytes = half * std::max<uint32_t>(recv_slots, 1);
  l.total = l.recv_offset + page_round(l.recv_bytes, page);
  return l;
}

uint64_t iova_from_random(uint64_t random, size_t page) {
  const uint64_t iova = random & ((uint64_t{1} << 47) - 1) & ~(uint64_t{page} - 1);
  return iova == 0 ? page : iova;
}

uint32_t qkey_from_random(uint32_t random) {
  const uint32_t q = random & 0x7fffffffu;
  return q == 0 ? 1 : q;
}

proto::QpInfo advertise(proto::QpInfo q, int remote_access, uint64_t iova, uint32_t rkey) {
  const bool shown = exposes_region(remote_access);
  q.addr = shown ? iova : 0;
  q.rkey = shown ? rkey : 0;
  return q;
}

}  // namespace rdmacheck::conn
