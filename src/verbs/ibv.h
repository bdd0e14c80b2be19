// One RAII owner per verbs object (after tensorpipe's common/ibv.h): a
// stateless deleter, a unique_ptr alias and a checked factory returning
// Result. Owners are declared by users in creation order so that members are
// destroyed in reverse (QP before CQ before PD before context). Deleters never
// throw: a failed destroy is logged to stderr and otherwise ignored.
#pragma once

#include <infiniband/verbs.h>

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "base/result.h"

namespace rdmacheck::verbs {

void log_destroy_failure(const char* call, int rc) noexcept;

template <typename T, auto Destroy>
struct Deleter {
  void operator()(T* p) const noexcept {
    if (p == nullptr) return;
    if constexpr (std::is_void_v<decltype(Destroy(p))>) {
      Destroy(p);
    } else {
      const int rc = Destroy(p);
      if (rc != 0) log_destroy_failure(typeid(T).name(), rc);
    }
  }
};

using ContextPtr = std::unique_ptr<ibv_context, Deleter<ibv_context, ibv_close_device>>;
using PdPtr = std::unique_ptr<ibv_pd, Deleter<ibv_pd, ibv_dealloc_pd>>;
using MrPtr = std::unique_ptr<ibv_mr, Deleter<ibv_mr, ibv_dereg_mr>>;
using CompChannelPtr =
    std::unique_ptr<ibv_comp_channel, Deleter<ibv_comp_channel, ibv_destroy_comp_channel>>;
using CqPtr = std::unique_ptr<ibv_cq, Deleter<ibv_cq, ibv_destroy_cq>>;
using QpPtr = std::unique_ptr<ibv_qp, Deleter<ibv_qp, ibv_destroy_qp>>;
using AhPtr = std::unique_ptr<ibv_ah, Deleter<ibv_ah, ibv_destroy_ah>>;

// The device list from ibv_get_device_list, freed on destruction.
class DeviceList {
 public:
  static Result<DeviceList> get();
  DeviceList(DeviceList&& o) noexcept : list_(o.list_), n_(o.n_) { o.list_ = nullptr; }
  DeviceList& operator=(DeviceList&&) = delete;
  DeviceList(const DeviceList&) = delete;
  ~DeviceList();
  [[nodiscard]] std::span<ibv_device*> devices() const { return {list_, static_cast<size_t>(n_)}; }
  // The named device, or the first one when name is empty; nullptr when absent.
  [[nodiscard]] ibv_device* find(const std::string& name) const;

 private:
  DeviceList(ibv_device** l, int n) : list_(l), n_(n) {}
  ibv_device** list_;
  int n_;
};

Result<ContextPtr> open_device(ibv_device* dev);
Result<PdPtr> alloc_pd(ibv_context* ctx);
Result<MrPtr> reg_mr(ibv_pd* pd, void* addr, size_t len, int access);
// The same, addressed through its lkey and rkey from IOVA instead of ADDR.
Result<MrPtr> reg_mr_iova(ibv_pd* pd, void* addr, size_t len, uint64_t iova, int access);
Result<CompChannelPtr> create_comp_channel(ibv_context* ctx);
Result<CqPtr> create_cq(ibv_context* ctx, int cqe, ibv_comp_channel* channel);
Result<QpPtr> create_qp(ibv_pd* pd, ibv_qp_init_attr& attr);
Result<AhPtr> create_ah(ibv_pd* pd, ibv_ah_attr& attr);
Result<ibv_port_attr> query_port(ibv_context* ctx, uint8_t port);
// Every valid GID of every port in one call (ibv_query_gid_table), for
// choosing among devices without walking 1024-entry tables one by one.
Result<std::vector<ibv_gid_entry>> query_gid_table(ibv_context* ctx, size_t max_entries);

// Path MTU enum <-> bytes (IBV_MTU_1024 <-> 1024); 0 / nullopt for invalid values.
int mtu_bytes(ibv_mtu mtu);
bool valid_mtu_enum(int value);

// "rxe0 port 1 qpn 0x11"
std::string qp_context(const ibv_qp* qp, uint8_t port);

}  // namespace rdmacheck::verbs
