// Control over MPI (the standard's collectives only, so Open MPI and MPICH
// both do). The one file of rdmacheck that includes mpi.h.
#pragma once

#include "mesh/control.h"

namespace rdmacheck::mesh {

class MpiControl final : public Control {
 public:
  MpiControl(int* argc, char*** argv);  // MPI_Init
  ~MpiControl() override;               // MPI_Finalize
  MpiControl(const MpiControl&) = delete;
  MpiControl& operator=(const MpiControl&) = delete;

  [[nodiscard]] int rank() const override { return rank_; }
  [[nodiscard]] int size() const override { return size_; }
  std::vector<std::string> allgather(const std::string& mine) override;
  std::vector<std::string> gather(const std::string& mine) override;
  std::string broadcast(const std::string& from_root) override;
  void barrier() override;

 private:
  int rank_ = 0;
  int size_ = 1;
};

}  // namespace rdmacheck::mesh
