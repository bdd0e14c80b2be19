// What the mesh needs of its launcher: ranks, and control messages only
// (every probe runs over RDMA verbs). mpi_control.cc implements it with the
// MPI standard's collectives; the driver never sees MPI, so it builds and is
// read without it.
#pragma once

#include <string>
#include <vector>

namespace rdmacheck::mesh {

class Control {
 public:
  virtual ~Control() = default;
  [[nodiscard]] virtual int rank() const = 0;
  [[nodiscard]] virtual int size() const = 0;
  // Every rank's string, in rank order, on every rank.
  virtual std::vector<std::string> allgather(const std::string& mine) = 0;
  // Every rank's string on rank 0 (empty elsewhere).
  virtual std::vector<std::string> gather(const std::string& mine) = 0;
  // Rank 0's string on every rank.
  virtual std::string broadcast(const std::string& from_root) = 0;
  virtual void barrier() = 0;
};

}  // namespace rdmacheck::mesh
