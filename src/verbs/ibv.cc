#include "verbs/ibv.h"

#include <fmt/core.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

namespace rdmacheck::verbs {

void log_destroy_failure(const char* what, int rc) noexcept {
  // Verbs destroy calls return the errno itself (or -1 with errno set in old providers).
  const int e = rc > 0 ? rc : errno;
  std::fprintf(stderr, "rdmacheck: warning: destroying %s failed: %s\n", what, std::strerror(e));
}

Result<DeviceList> DeviceList::get() {
  int n = 0;
  errno = 0;
  ibv_device** l = ibv_get_device_list(&n);
  if (l == nullptr) return errno_error("ibv_get_device_list");
  return DeviceList(l, n);
}

DeviceList::~DeviceList() {
  if (list_ != nullptr) ibv_free_device_list(list_);
}

ibv_device* DeviceList::find(const std::string& name) const {
  for (ibv_device* d : devices()) {
    if (name.empty() || name == ibv_get_device_name(d)) return d;
  }
  return nullptr;
}

Result<ContextPtr> open_device(ibv_device* dev) {
  errno = 0;
  ibv_context* ctx = ibv_open_device(dev);
  if (ctx == nullptr) return errno_error("ibv_open_device", ibv_get_device_name(dev));
  return ContextPtr(ctx);
}

Result<PdPtr> alloc_pd(ibv_context* ctx) {
  errno = 0;
  ibv_pd* pd = ibv_alloc_pd(ctx);
  if (pd == nullptr) return errno_error("ibv_alloc_pd", ibv_get_device_name(ctx->device));
  return PdPtr(pd);
}

Result<MrPtr> reg_mr(ibv_pd* pd, void* addr, size_t len, int access) {
  errno = 0;
  ibv_mr* mr = ibv_reg_mr(pd, addr, len, access);
  if (mr == nullptr) {
    return errno_error("ibv_reg_mr",
                       fmt::format("{} {} bytes", ibv_get_device_name(pd->context->device), len));
  }
  return MrPtr(mr);
}

Result<MrPtr> reg_mr_iova(ibv_pd* pd, void* addr, size_t len, uint64_t iova, int access) {
  errno = 0;
  ibv_mr* mr = ibv_reg_mr_iova(pd, addr, len, iova, access);
  if (mr == nullptr) {
    return errno_error("ibv_reg_mr_iova",
                       fmt::format("{} {} bytes at IOVA {:#x}",
                                   ibv_get_device_name(pd->context->device), len, iova));
  }
  return MrPtr(mr);
}

Result<CompChannelPtr> create_comp_channel(ibv_context* ctx) {
  errno = 0;
  ibv_comp_channel* ch = ibv_create_comp_channel(ctx);
  if (ch == nullptr)
    return errno_error("ibv_create_comp_channel", ibv_get_device_name(ctx->device));
  return CompChannelPtr(ch);
}

Result<CqPtr> create_cq(ibv_context* ctx, int cqe, ibv_comp_channel* channel) {
  errno = 0;
  ibv_cq* cq = ibv_create_cq(ctx, cqe, nullptr, channel, 0);
  if (cq == nullptr) {
    return errno_error("ibv_create_cq",
                       fmt::format("{} cqe {}", ibv_get_device_name(ctx->device), cqe));
  }
  return CqPtr(cq);
}

Result<QpPtr> create_qp(ibv_pd* pd, ibv_qp_init_attr& attr) {
  errno = 0;
  ibv_qp* qp = ibv_create_qp(pd, &attr);
  if (qp == nullptr) {
    return errno_error("ibv_create_qp", ibv_get_device_name(pd->context->device));
  }
  return QpPtr(qp);
}

Result<AhPtr> create_ah(ibv_pd* pd, ibv_ah_attr& attr) {
  errno = 0;
  ibv_ah* ah = ibv_create_ah(pd, &attr);
  if (ah == nullptr) return errno_error("ibv_create_ah", ibv_get_device_name(pd->context->device));
  return AhPtr(ah);
}

Result<ibv_port_attr> query_port(ibv_context* ctx, uint8_t port) {
  ibv_port_attr attr{};
  if (int rc = ibv_query_port(ctx, port, &attr); rc != 0) {
    return code_error("ibv_query_port", rc,
                      fmt::format("{} port {}", ibv_get_device_name(ctx->device), port));
  }
  return attr;
}

Result<std::vector<ibv_gid_entry>> query_gid_table(ibv_context* ctx, size_t max_entries) {
  std::vector<ibv_gid_entry> entries(std::max<size_t>(max_entries, 1));
  const ssize_t n = ibv_query_gid_table(ctx, entries.data(), entries.size(), 0);
  if (n < 0) {
    return code_error("ibv_query_gid_table", static_cast<int>(-n),
                      ibv_get_device_name(ctx->device));
  }
  entries.resize(static_cast<size_t>(n));
  return entries;
}

int mtu_bytes(ibv_mtu mtu) {
  switch (mtu) {
    case IBV_MTU_256:
      return 256;
    case IBV_MTU_512:
      return 512;
    case IBV_MTU_1024:
      return 1024;
    case IBV_MTU_2048:
      return 2048;
    case IBV_MTU_4096:
      return 4096;
  }
  return 0;
}

bool valid_mtu_enum(int value) { return value >= IBV_MTU_256 && value <= IBV_MTU_4096; }

std::string qp_context(const ibv_qp* qp, uint8_t port) {
  return fmt::format("{} port {} qpn {:#x}", ibv_get_device_name(qp->context->device), port,
                     qp->qp_num);
}

}  // namespace rdmacheck::verbs
