// The RoCE MTU arithmetic, shared with the checks' tests.
#pragma once

namespace rdmacheck::doctor {

// GRH 40 + UDP 8 + BTH 12 + XRC ext 4 + AtomicETH 28 + ICRC 4 (iboe_get_mtu).
constexpr int kRoceHeaderBytes = 96;

// The largest RoCE (IB) MTU a netdev MTU allows: 1500 -> 1024, 9000 -> 4096.
int roce_mtu_for(int netdev_mtu);

}  // namespace rdmacheck::doctor
