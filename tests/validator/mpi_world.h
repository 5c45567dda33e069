// The MPI world of the validator's multi-process tests (run under mpirun, mpi_test_main.cpp).
#pragma once

#include <mpi.h>

namespace gpuplan {

/// Ranks mpirun started.
inline int WorldSize() {
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return size;
}

/// This process's rank.
inline int WorldRank() {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

}  // namespace gpuplan
