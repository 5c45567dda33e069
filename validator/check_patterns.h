// The known values the validator's checked communication carries (issue 19: every collective and
// every send/recv is checked, as nccl-tests' #wrong column does): what each rank sends and what
// each element must be on arrival, as functions of the rank, the group size and the element
// index. One definition for the MPI transport (host code) and the NCCL transport (device
// kernels), so that both check the same thing. All values are exact 64-bit integers: a sum comes
// out the same whatever order the library adds in.
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define GPUPLAN_HOST_DEVICE __host__ __device__
#else
#define GPUPLAN_HOST_DEVICE
#endif

namespace gpuplan::check {

/// Sum all-reduce over n ranks: rank r sends element i = (r + 1)(i + 1); each arrives as
/// (i + 1) n (n + 1) / 2.
GPUPLAN_HOST_DEVICE inline int64_t AllReduceSend(int64_t r, int64_t i) { return (r + 1) * (i + 1); }
GPUPLAN_HOST_DEVICE inline int64_t AllReduceWant(int64_t n, int64_t i) {
  return (i + 1) * n * (n + 1) / 2;
}

/// All-gather of `count` elements per rank: rank r sends r * 1e6 + i; element j of the gathered
/// buffer is block j / count, index j % count.
GPUPLAN_HOST_DEVICE inline int64_t AllGatherSend(int64_t r, int64_t i) { return r * 1000000 + i; }
GPUPLAN_HOST_DEVICE inline int64_t AllGatherWant(int64_t count, int64_t j) {
  return (j / count) * 1000000 + j % count;
}

/// Sum reduce-scatter of n blocks of `count`: rank r sends element j = (r + 1)(j + 1) of n x
/// count; element i of its block r arrives as (r count + i + 1) n (n + 1) / 2.
GPUPLAN_HOST_DEVICE inline int64_t ReduceScatterSend(int64_t r, int64_t j) {
  return (r + 1) * (j + 1);
}
GPUPLAN_HOST_DEVICE inline int64_t ReduceScatterWant(int64_t r, int64_t n, int64_t count,
                                                     int64_t i) {
  return (r * count + i + 1) * n * (n + 1) / 2;
}

/// All-to-all of `count` per peer: block p of rank r (for peer p) holds r * 1e6 + p * 1e3 + i;
/// rank r receives block q from peer q as q * 1e6 + r * 1e3 + i.
GPUPLAN_HOST_DEVICE inline int64_t AllToAllSend(int64_t r, int64_t count, int64_t j) {
  return r * 1000000 + (j / count) * 1000 + j % count;
}
GPUPLAN_HOST_DEVICE inline int64_t AllToAllWant(int64_t r, int64_t count, int64_t j) {
  return (j / count) * 1000000 + r * 1000 + j % count;
}

/// Ring send/recv (the CP ring): rank r sends r * 1e6 + i to r + 1 and receives prev * 1e6 + i.
GPUPLAN_HOST_DEVICE inline int64_t RingSend(int64_t r, int64_t i) { return r * 1000000 + i; }

/// A pipeline message with `tag` from world rank `sender`: element i.
GPUPLAN_HOST_DEVICE inline int64_t Message(int64_t tag, int64_t sender, int64_t i) {
  return (tag << 40) | (sender << 24) | (i & 0xFFFFFF);
}

}  // namespace gpuplan::check

#undef GPUPLAN_HOST_DEVICE
