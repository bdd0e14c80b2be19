// What one side of a test exposes to its peer, as pure arithmetic: where the
// send half and the receive slots lie in the buffer (each region on its own
// pages, so each gets its own MR with its own rights), the random IOVA the
// receive region is registered at, and which tests tell the peer its address
// and key at all.
#pragma once

#include <cstddef>
#include <cstdint>

#include "proto/messages.h"

namespace rdmacheck::conn {

struct BufferLayout {
  size_t send_bytes = 0;   // the send half: registered for local access only
  size_t recv_offset = 0;  // page-aligned start of the receive region
  size_t recv_bytes = 0;   // recv_slots halves side by side: the region a peer may reach
  size_t total = 0;        // bytes allocated and pinned: both regions, page-rounded
};

// HALF is the largest message of one direction (UD: with its GRH); PAGE a power of two.
BufferLayout buffer_layout(size_t half, uint32_t recv_slots, size_t page);

// A page-aligned, non-zero IOVA below 2^47 from 64 random bits, so that a
// peer learns nothing of this process's address space and an (address, key)
// pair of an earlier session names nothing in this one.
uint64_t iova_from_random(uint64_t random, size_t page);

// A UD Q_Key from 32 random bits: non-zero, with the high bit clear (a Q_Key
// with it set is a controlled one, which a send work request may not name).
uint32_t qkey_from_random(uint32_t random);

// Whether a peer is told where our receive region is and its key: only when
// the test gives it remote access (write, write_imm, read, atomics). A send
// test, or a side that only receives, tells nobody.
constexpr bool exposes_region(int remote_access) { return remote_access != 0; }

// Q with the receive region's address and key filled in when ACCESS exposes
// it, and both 0 otherwise.
proto::QpInfo advertise(proto::QpInfo q, int remote_access, uint64_t iova, uint32_t rkey);

}  // namespace rdmacheck::conn
