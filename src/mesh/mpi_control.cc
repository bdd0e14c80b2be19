#include "mesh/mpi_control.h"

#include <mpi.h>

#include <numeric>

namespace rdmacheck::mesh {

namespace {

// Splits BYTES into the strings of LENS, in order.
std::vector<std::string> split(const std::vector<char>& bytes, const std::vector<int>& lens) {
  std::vector<std::string> out;
  size_t at = 0;
  for (int len : lens) {
    out.emplace_back(bytes.data() + at, static_cast<size_t>(len));
    at += static_cast<size_t>(len);
  }
  return out;
}

std::vector<int> offsets(const std::vector<int>& lens) {
  std::vector<int> off(lens.size(), 0);
  if (!lens.empty()) std::exclusive_scan(lens.begin(), lens.end(), off.begin(), 0);
  return off;
}

}  // namespace

MpiControl::MpiControl(int* argc, char*** argv) {
  MPI_Init(argc, argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
}

MpiControl::~MpiControl() { MPI_Finalize(); }

std::vector<std::string> MpiControl::allgather(const std::string& mine) {
  int len = static_cast<int>(mine.size());
  std::vector<int> lens(static_cast<size_t>(size_));
  MPI_Allgather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, MPI_COMM_WORLD);
  auto off = offsets(lens);
  std::vector<char> all(static_cast<size_t>(std::accumulate(lens.begin(), lens.end(), 0)) + 1);
  MPI_Allgatherv(mine.data(), len, MPI_CHAR, all.data(), lens.data(), off.data(), MPI_CHAR,
                 MPI_COMM_WORLD);
  return split(all, lens);
}

std::vector<std::string> MpiControl::gather(const std::string& mine) {
  int len = static_cast<int>(mine.size());
  std::vector<int> lens(static_cast<size_t>(size_));
  MPI_Gather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  auto off = offsets(lens);
  std::vector<char> all(
      rank_ == 0 ? static_cast<size_t>(std::accumulate(lens.begin(), lens.end(), 0)) + 1 : 1);
  MPI_Gatherv(mine.data(), len, MPI_CHAR, all.data(), lens.data(), off.data(), MPI_CHAR, 0,
              MPI_COMM_WORLD);
  return rank_ == 0 ? split(all, lens) : std::vector<std::string>{};
}

std::string MpiControl::broadcast(const std::string& from_root) {
  int len = static_cast<int>(from_root.size());
  MPI_Bcast(&len, 1, MPI_INT, 0, MPI_COMM_WORLD);
  std::vector<char> buf(static_cast<size_t>(len) + 1);
  if (rank_ == 0) std::copy(from_root.begin(), from_root.end(), buf.begin());
  MPI_Bcast(buf.data(), len, MPI_CHAR, 0, MPI_COMM_WORLD);
  return std::string(buf.data(), static_cast<size_t>(len));
}

void MpiControl::barrier() { MPI_Barrier(MPI_COMM_WORLD); }

}  // namespace rdmacheck::mesh
