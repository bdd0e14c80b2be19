// The one piece that differs between operations: how a message's work
// request is built. Everything else (posting, signalling, polling, timing)
// is the same engine for every operation.
#pragma once

#include <infiniband/verbs.h>

#include <cstdint>

#include "conn/endpoint.h"
#include "perf/spec.h"
#include "proto/messages.h"

namespace rdmacheck::perf {

// A work request with its own scatter/gather entry (so lists can be chained).
struct WorkRequest {
  ibv_send_wr wr{};
  ibv_sge sge{};
};

// Fills W for one SIZE-byte message of OP towards PEER. Sends and writes go
// from the endpoint's send half; reads and atomics land there too, so the
// receive half stays what the peer reads, writes or counts in.
// Messages up to inline_size are posted inline (not reads or atomics).
void build_wr(Op op, const conn::Endpoint& ep, const proto::QpInfo& peer, uint32_t size,
              uint32_t inline_size, WorkRequest& w);

// Compare-and-swap number N (from 0) of a run swaps N for N+1, so every one
// succeeds and changes the target, as a lock would, and the target ends up
// counting them like fetch-and-add's. Other operations are left alone.
inline void sequence_atomic(WorkRequest& w, uint64_t n) {
  if (w.wr.opcode == IBV_WR_ATOMIC_CMP_AND_SWP) {
    w.wr.wr.atomic.compare_add = n;
    w.wr.wr.atomic.swap = n + 1;
  }
}

// The receive side of a two-sided op: one receive of SIZE bytes (plus the
// 40-byte GRH on UD) into the receive half.
Status post_receive(conn::Endpoint& ep, uint32_t size);

}  // namespace rdmacheck::perf
