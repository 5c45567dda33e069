#include <mma.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>

#include "kernels/attention.h"
#include "kernels/device_common.cuh"
#include "profiler/cuda_check.h"

namespace gpuplan::kernels {
namespace {

namespace wmma = nvcuda::wmma;

// Tensor-core tiles: WMMA m16n16k16, 16-bit inputs, fp32 accumulation (sm_80 and later).
constexpr int kMma = 16;
using Acc = wmma::fragment<wmma::accumulator, kMma, kMma, kMma, float>;

// Query rows (Br) and key columns (Bc) per tile. Br = Bc puts the causal diagonal inside one
// tile pair, so query tile i needs key tiles 0..i (FlashAttention-2, Dao 2023, Sec. 3.1.1).
constexpr int kTile = 64;
constexpr int kTileMmas = kTile / kMma;
constexpr int kForwardThreads = 128;   // 4 warps; the softmax gives each query row two threads
constexpr int kBackwardThreads = 256;  // 8 warps share the dK and dV accumulators
constexpr float kLog2e = 1.4426950408889634f;
constexpr float kLn2 = 0.6931471805599453f;

// Shared-memory row strides, padded by 16 bytes: WMMA needs ldm to be a multiple of 8 (16-bit)
// or 4 (fp32) elements and 32-byte aligned tile pointers; the padding also staggers banks.
template <int D>
constexpr int kLdIn = D + 8;     // q, k, v, dO tiles [kTile][D] in T
constexpr int kLdS = kTile + 4;  // scores, dP [kTile][kTile] in fp32
constexpr int kLdP = kTile + 8;  // P, dS [kTile][kTile] in T
template <int D>
constexpr int kLdAcc = D + 4;  // O accumulator, dQ/dK/dV staging [kTile][D] in fp32

constexpr size_t Align128(size_t bytes) { return (bytes + 127) / 128 * 128; }

// Byte offsets into the dynamic shared memory of the forward kernel.
template <typename T, int D>
struct ForwardSmem {
  static constexpr size_t kInBytes = Align128(sizeof(T) * kTile * kLdIn<D>);
  static constexpr size_t kQ = 0;
  static constexpr size_t kK = kQ + kInBytes;
  static constexpr size_t kV = kK + kInBytes;
  static constexpr size_t kS = kV + kInBytes;
  static constexpr size_t kP = kS + Align128(sizeof(float) * kTile * kLdS);
  static constexpr size_t kO = kP + Align128(sizeof(T) * kTile * kLdP);
  static constexpr size_t kInvL = kO + Align128(sizeof(float) * kTile * kLdAcc<D>);
  static constexpr size_t kBytes = kInvL + Align128(sizeof(float) * kTile);
};

// Byte offsets into the dynamic shared memory of the backward kernel. The scratch region holds
// S and dP ([kTile][kLdS] fp32 each) and, once they are consumed, the fp32 staging of dQ, dK, dV.
template <typename T, int D>
struct BackwardSmem {
  static constexpr size_t kInBytes = Align128(sizeof(T) * kTile * kLdIn<D>);
  static constexpr size_t kScoreFloats = kTile * kLdS;
  static constexpr size_t kStageFloats = kTile * kLdAcc<D>;
  static constexpr size_t kScratchFloats =
      2 * kScoreFloats > kStageFloats ? 2 * kScoreFloats : kStageFloats;
  static constexpr size_t kQ = 0;
  static constexpr size_t kDo = kQ + kInBytes;
  static constexpr size_t kK = kDo + kInBytes;
  static constexpr size_t kV = kK + kInBytes;
  static constexpr size_t kScratch = kV + kInBytes;
  static constexpr size_t kP = kScratch + Align128(sizeof(float) * kScratchFloats);
  static constexpr size_t kDs = kP + Align128(sizeof(T) * kTile * kLdP);
  static constexpr size_t kLse = kDs + Align128(sizeof(T) * kTile * kLdP);
  static constexpr size_t kD = kLse + Align128(sizeof(float) * kTile);
  static constexpr size_t kBytes = kD + Align128(sizeof(float) * kTile);
  static_assert(kScoreFloats * sizeof(float) % 128 == 0, "dP must stay 128-byte aligned");
};

// Copies rows [row0, row0 + kTile) of one (batch, head) of a [batch, seq, heads, D] tensor
// (`src` points at its row 0, rows `row_stride` elements apart) into shared memory
// [kTile][kLdIn<D>], zero-filling rows at or past `seq`. 16-byte vector copies: D * sizeof(T) is
// a multiple of 16 and the tensors are 16-byte aligned (checked by the launchers).
template <typename T, int D>
__device__ void LoadTile(T* dst, const T* __restrict__ src, int64_t row_stride, int row0, int seq) {
  constexpr int kVecElems = 16 / static_cast<int>(sizeof(T));
  constexpr int kVecsPerRow = D / kVecElems;
  for (int i = static_cast<int>(threadIdx.x); i < kTile * kVecsPerRow;
       i += static_cast<int>(blockDim.x)) {
    const int r = i / kVecsPerRow;
    const int c = (i % kVecsPerRow) * kVecElems;
    uint4 value = make_uint4(0u, 0u, 0u, 0u);
    if (row0 + r < seq) value = *reinterpret_cast<const uint4*>(src + (row0 + r) * row_stride + c);
    *reinterpret_cast<uint4*>(dst + r * kLdIn<D> + c) = value;
  }
}

// Writes rows [row0, row0 + kTile) below `seq` of one (batch, head) of a [batch, seq, heads, D]
// tensor from the fp32 shared tile `src` [kTile][kLdAcc<D>], each row times row_scale(r).
template <typename T, int D, typename RowScale>
__device__ void StoreTile(T* __restrict__ dst, const float* src, int64_t row_stride, int row0,
                          int seq, RowScale row_scale) {
  for (int i = static_cast<int>(threadIdx.x); i < kTile * D; i += static_cast<int>(blockDim.x)) {
    const int r = i / D;
    const int c = i % D;
    if (row0 + r < seq) {
      dst[(row0 + r) * row_stride + c] = FromFloat<T>(src[r * kLdAcc<D> + c] * row_scale(r));
    }
  }
}

// acc += A B for one 16x16 output tile over kSteps k-steps of 16, A [16 x 16 kSteps] and
// B [16 kSteps x 16] in shared memory with the given WMMA layouts and leading dimensions.
template <typename T, typename LayoutA, typename LayoutB, int kSteps>
__device__ __forceinline__ void MmaAccumulate(Acc& acc, const T* a, unsigned lda, const T* b,
                                              unsigned ldb) {
  wmma::fragment<wmma::matrix_a, kMma, kMma, kMma, T, LayoutA> fa;
  wmma::fragment<wmma::matrix_b, kMma, kMma, kMma, T, LayoutB> fb;
#pragma unroll
  for (int s = 0; s < kSteps; ++s) {
    // Row-major A advances along k by columns, column-major A by rows; B the other way round.
    const unsigned ka = std::is_same_v<LayoutA, wmma::row_major> ? s * kMma : s * kMma * lda;
    const unsigned kb = std::is_same_v<LayoutB, wmma::row_major> ? s * kMma * ldb : s * kMma;
    wmma::load_matrix_sync(fa, a + ka, lda);
    wmma::load_matrix_sync(fb, b + kb, ldb);
    wmma::mma_sync(acc, fa, fb, acc);
  }
}

// C [kTile][kTile] fp32 (ldc kLdS) = A B^T with A, B [kTile][D] row-major in T (ld kLdIn<D>):
// S = Q K^T and dP = dO V^T. Tiles are dealt round-robin to the block's warps.
template <typename T, int D>
__device__ void TileGemmABt(float* c, const T* a, const T* b, int warp, int warps) {
  for (int t = warp; t < kTileMmas * kTileMmas; t += warps) {
    const int tr = t / kTileMmas;
    const int tc = t % kTileMmas;
    Acc acc;
    wmma::fill_fragment(acc, 0.0f);
    MmaAccumulate<T, wmma::row_major, wmma::col_major, D / kMma>(
        acc, a + tr * kMma * kLdIn<D>, kLdIn<D>, b + tc * kMma * kLdIn<D>, kLdIn<D>);
    wmma::store_matrix_sync(c + tr * kMma * kLdS + tc * kMma, acc, kLdS, wmma::mem_row_major);
  }
}

// Forward: one block per (query tile, head, batch); FlashAttention-2, Dao 2023, Algorithm 1.
// Scores are kept in log2 units (scale * log2(e) folded in) so exp2 serves as exp.
template <typename T, int D>
__global__ void __launch_bounds__(kForwardThreads)
    AttentionForwardKernel(const T* __restrict__ q, const T* __restrict__ k,
                           const T* __restrict__ v, T* __restrict__ o, float* __restrict__ lse,
                           int seq, int heads, float scale_log2) {
  using L = ForwardSmem<T, D>;
  extern __shared__ __align__(128) unsigned char smem[];
  T* sq = reinterpret_cast<T*>(smem + L::kQ);
  T* sk = reinterpret_cast<T*>(smem + L::kK);
  T* sv = reinterpret_cast<T*>(smem + L::kV);
  float* ss = reinterpret_cast<float*>(smem + L::kS);
  T* sp = reinterpret_cast<T*>(smem + L::kP);
  float* so = reinterpret_cast<float*>(smem + L::kO);
  float* sinv_l = reinterpret_cast<float*>(smem + L::kInvL);

  const int tiles = (seq + kTile - 1) / kTile;
  const int q_tile = tiles - 1 - static_cast<int>(blockIdx.x);  // longest rows launch first
  const int h = static_cast<int>(blockIdx.y);
  const int b = static_cast<int>(blockIdx.z);
  const int64_t row_stride = static_cast<int64_t>(heads) * D;
  const int64_t base = (static_cast<int64_t>(b) * seq * heads + h) * D;  // element (b, 0, h, 0)
  const int q0 = q_tile * kTile;
  const int warp = static_cast<int>(threadIdx.x) / 32;
  // Softmax mapping: two neighbouring lanes share query row `row`, each half of its columns.
  const int row = static_cast<int>(threadIdx.x) / 2;
  const int half = static_cast<int>(threadIdx.x) % 2;
  const int qi = q0 + row;
  constexpr int kHalfCols = kTile / 2;
  constexpr int kHalfDim = D / 2;
  static_assert(kForwardThreads == 2 * kTile, "two threads per query row");

  LoadTile<T, D>(sq, q + base, row_stride, q0, seq);
  for (int i = static_cast<int>(threadIdx.x); i < kTile * kLdAcc<D>; i += kForwardThreads) {
    so[i] = 0.0f;
  }
  float m = -INFINITY;  // running row max (Algorithm 1, m_i), same in both threads of the row
  float l = 0.0f;       // running row sum of exp2(s - m) (l_i)

  for (int k_tile = 0; k_tile <= q_tile; ++k_tile) {
    const int k0 = k_tile * kTile;
    __syncthreads();  // the previous iteration is done with sk, sv, sp
    LoadTile<T, D>(sk, k + base, row_stride, k0, seq);
    LoadTile<T, D>(sv, v + base, row_stride, k0, seq);
    __syncthreads();
    TileGemmABt<T, D>(ss, sq, sk, warp, kForwardThreads / 32);  // Algorithm 1, line 8
    __syncthreads();

    // Lines 9-10: m_new = max(m, rowmax(S)), P = exp(S - m_new), l = exp(m - m_new) l + rowsum(P);
    // the causal mask (key > query) and keys past seq become -inf.
    float* srow = ss + row * kLdS + half * kHalfCols;
    float tile_max = -INFINITY;
    for (int c = 0; c < kHalfCols; ++c) {
      const int kj = k0 + half * kHalfCols + c;
      const float s = (kj <= qi && kj < seq) ? srow[c] * scale_log2 : -INFINITY;
      srow[c] = s;
      tile_max = fmaxf(tile_max, s);
    }
    tile_max = fmaxf(tile_max, __shfl_xor_sync(0xffffffffu, tile_max, 1));
    const float m_new = fmaxf(m, tile_max);
    const float m_ref = m_new == -INFINITY ? 0.0f : m_new;  // all masked so far: every exp2 is 0
    const float alpha = exp2f(m - m_ref);
    T* prow = sp + row * kLdP + half * kHalfCols;
    float sum = 0.0f;
    for (int c = 0; c < kHalfCols; ++c) {
      const float p = exp2f(srow[c] - m_ref);
      prow[c] = FromFloat<T>(p);
      sum += p;
    }
    sum += __shfl_xor_sync(0xffffffffu, sum, 1);
    l = alpha * l + sum;
    m = m_new;
    // Line 10: O = diag(exp(m - m_new)) O, this thread's half of the row.
    float* orow = so + row * kLdAcc<D> + half * kHalfDim;
    for (int c = 0; c < kHalfDim; ++c) orow[c] *= alpha;
    __syncthreads();

    // Line 10: O += P V, accumulated in place through WMMA fragments loaded from shared memory.
    for (int t = warp; t < kTileMmas * (D / kMma); t += kForwardThreads / 32) {
      const int tr = t / (D / kMma);
      const int tc = t % (D / kMma);
      float* otile = so + tr * kMma * kLdAcc<D> + tc * kMma;
      Acc acc;
      wmma::load_matrix_sync(acc, otile, kLdAcc<D>, wmma::mem_row_major);
      MmaAccumulate<T, wmma::row_major, wmma::row_major, kTileMmas>(acc, sp + tr * kMma * kLdP,
                                                                    kLdP, sv + tc * kMma, kLdIn<D>);
      wmma::store_matrix_sync(otile, acc, kLdAcc<D>, wmma::mem_row_major);
    }
  }

  // Lines 12-13: O = diag(l)^-1 O, L = m + log(l) (natural log: log2 units times ln 2).
  if (half == 0) {
    sinv_l[row] = 1.0f / l;
    if (qi < seq) lse[(static_cast<int64_t>(b) * heads + h) * seq + qi] = (m + log2f(l)) * kLn2;
  }
  __syncthreads();
  StoreTile<T, D>(o + base, so, row_stride, q0, seq, [&](int r) { return sinv_l[r]; });
}

// Backward step 1 (Algorithm 2, line 4): D = rowsum(dO * O) in fp32, one warp per row of the
// [batch, seq, heads] rows, written to [batch, heads, seq].
template <typename T, int D>
__global__ void AttentionRowDotKernel(const T* __restrict__ o, const T* __restrict__ d_o,
                                      float* __restrict__ dsum, int64_t rows, int seq, int heads) {
  const int64_t warps = static_cast<int64_t>(gridDim.x) * (blockDim.x / 32);
  const int lane = static_cast<int>(threadIdx.x) % 32;
  // Grid-stride over rows, one warp a row (the loop bound is uniform across the warp).
  for (int64_t row = static_cast<int64_t>(blockIdx.x) * (blockDim.x / 32) + threadIdx.x / 32;
       row < rows; row += warps) {
    float s = 0.0f;
    for (int c = lane; c < D; c += 32) s += ToFloat(o[row * D + c]) * ToFloat(d_o[row * D + c]);
    s = WarpReduce(s, SumOp{});
    if (lane == 0) {
      const int64_t h = row % heads;
      const int64_t si = (row / heads) % seq;
      const int64_t b = row / heads / seq;
      dsum[(b * heads + h) * seq + si] = s;
    }
  }
}

// Backward step 2: one block per (key tile j, head, batch) over query tiles i >= j
// (FlashAttention-2, Dao 2023, Algorithm 2, lines 6-24 with the causal skip). dK_j and dV_j stay in
// WMMA fragments; dQ_i is added to the fp32 accumulator `dq_acc` (layout of q) with atomicAdd.
template <typename T, int D>
__global__ void __launch_bounds__(kBackwardThreads)
    AttentionBackwardKernel(const T* __restrict__ q, const T* __restrict__ k,
                            const T* __restrict__ v, const T* __restrict__ d_o,
                            const float* __restrict__ lse, const float* __restrict__ dsum,
                            float* __restrict__ dq_acc, T* __restrict__ dk, T* __restrict__ dv,
                            int seq, int heads, float scale) {
  using L = BackwardSmem<T, D>;
  extern __shared__ __align__(128) unsigned char smem[];
  T* sq = reinterpret_cast<T*>(smem + L::kQ);
  T* sdo = reinterpret_cast<T*>(smem + L::kDo);
  T* sk = reinterpret_cast<T*>(smem + L::kK);
  T* sv = reinterpret_cast<T*>(smem + L::kV);
  float* ss = reinterpret_cast<float*>(smem + L::kScratch);
  float* sdp = ss + L::kScoreFloats;
  float* stage = ss;  // reused once S and dP are consumed
  T* sp = reinterpret_cast<T*>(smem + L::kP);
  T* sds = reinterpret_cast<T*>(smem + L::kDs);
  float* slse = reinterpret_cast<float*>(smem + L::kLse);
  float* sd = reinterpret_cast<float*>(smem + L::kD);

  constexpr int kWarps = kBackwardThreads / 32;
  constexpr int kOutTiles = kTileMmas * (D / kMma);  // 16x16 tiles of a [kTile][D] block
  constexpr int kOutPerWarp = kOutTiles / kWarps;
  static_assert(kOutTiles % kWarps == 0, "dK/dV tiles split evenly over the warps");

  const int tiles = (seq + kTile - 1) / kTile;
  const int k_tile = static_cast<int>(blockIdx.x);  // tile 0 meets every query tile: launch first
  const int h = static_cast<int>(blockIdx.y);
  const int b = static_cast<int>(blockIdx.z);
  const int64_t row_stride = static_cast<int64_t>(heads) * D;
  const int64_t base = (static_cast<int64_t>(b) * seq * heads + h) * D;
  const int64_t stat_base = (static_cast<int64_t>(b) * heads + h) * seq;
  const int k0 = k_tile * kTile;
  const int warp = static_cast<int>(threadIdx.x) / 32;
  const float scale_log2 = scale * kLog2e;

  LoadTile<T, D>(sk, k + base, row_stride, k0, seq);  // line 6
  LoadTile<T, D>(sv, v + base, row_stride, k0, seq);
  Acc dk_acc[kOutPerWarp];  // line 7: dK_j = 0, dV_j = 0; tile warp + i * kWarps of [kTile][D]
  Acc dv_acc[kOutPerWarp];
#pragma unroll
  for (int i = 0; i < kOutPerWarp; ++i) {
    wmma::fill_fragment(dk_acc[i], 0.0f);
    wmma::fill_fragment(dv_acc[i], 0.0f);
  }

  for (int q_tile = k_tile; q_tile < tiles; ++q_tile) {  // line 8, tiles below the diagonal skipped
    const int q0 = q_tile * kTile;
    __syncthreads();  // the previous iteration is done with sq, sdo, sp, sds and the scratch
    LoadTile<T, D>(sq, q + base, row_stride, q0, seq);  // line 9
    LoadTile<T, D>(sdo, d_o + base, row_stride, q0, seq);
    if (threadIdx.x < kTile) {
      const int qi = q0 + static_cast<int>(threadIdx.x);
      slse[threadIdx.x] = qi < seq ? lse[stat_base + qi] * kLog2e : 0.0f;
      sd[threadIdx.x] = qi < seq ? dsum[stat_base + qi] : 0.0f;
    }
    __syncthreads();
    TileGemmABt<T, D>(ss, sq, sk, warp, kWarps);    // line 10: S = Q K^T (unscaled)
    TileGemmABt<T, D>(sdp, sdo, sv, warp, kWarps);  // line 16: dP = dO V^T
    __syncthreads();

    // Lines 13 and 17: P = exp(scale S - L) under the causal mask, dS = P * (dP - D).
    for (int i = static_cast<int>(threadIdx.x); i < kTile * kTile; i += kBackwardThreads) {
      const int r = i / kTile;
      const int c = i % kTile;
      const int qi = q0 + r;
      const int kj = k0 + c;
      const float p =
          (qi < seq && kj <= qi) ? exp2f(ss[r * kLdS + c] * scale_log2 - slse[r]) : 0.0f;
      sp[r * kLdP + c] = FromFloat<T>(p);
      sds[r * kLdP + c] = FromFloat<T>(p * (sdp[r * kLdS + c] - sd[r]));
    }
    __syncthreads();

    // Line 15: dV_j += P^T dO_i; line 19: dK_j += dS^T Q_i (scale applied on the way out).
    // P^T and dS^T are read as column-major A operands of the row-major P and dS.
#pragma unroll
    for (int i = 0; i < kOutPerWarp; ++i) {
      const int t = warp + i * kWarps;
      const int tr = t / (D / kMma);
      const int tc = t % (D / kMma);
      MmaAccumulate<T, wmma::col_major, wmma::row_major, kTileMmas>(dv_acc[i], sp + tr * kMma, kLdP,
                                                                    sdo + tc * kMma, kLdIn<D>);
      MmaAccumulate<T, wmma::col_major, wmma::row_major, kTileMmas>(dk_acc[i], sds + tr * kMma,
                                                                    kLdP, sq + tc * kMma, kLdIn<D>);
    }

    // Line 18: dQ_i += scale dS K_j, staged in the scratch (S and dP are consumed) and added to
    // the fp32 accumulator in global memory.
    for (int t = warp; t < kOutTiles; t += kWarps) {
      const int tr = t / (D / kMma);
      const int tc = t % (D / kMma);
      Acc acc;
      wmma::fill_fragment(acc, 0.0f);
      MmaAccumulate<T, wmma::row_major, wmma::row_major, kTileMmas>(acc, sds + tr * kMma * kLdP,
                                                                    kLdP, sk + tc * kMma, kLdIn<D>);
      wmma::store_matrix_sync(stage + tr * kMma * kLdAcc<D> + tc * kMma, acc, kLdAcc<D>,
                              wmma::mem_row_major);
    }
    __syncthreads();
    for (int i = static_cast<int>(threadIdx.x); i < kTile * D; i += kBackwardThreads) {
      const int r = i / D;
      const int c = i % D;
      if (q0 + r < seq) {
        atomicAdd(dq_acc + base + (q0 + r) * row_stride + c, scale * stage[r * kLdAcc<D> + c]);
      }
    }
  }

  // Line 24: write dV_j and dK_j (times the softmax scale) through the fp32 staging area.
  __syncthreads();  // the last dQ atomics have read the staging area
#pragma unroll
  for (int i = 0; i < kOutPerWarp; ++i) {
    const int t = warp + i * kWarps;
    wmma::store_matrix_sync(stage + (t / (D / kMma)) * kMma * kLdAcc<D> + (t % (D / kMma)) * kMma,
                            dv_acc[i], kLdAcc<D>, wmma::mem_row_major);
  }
  __syncthreads();
  StoreTile<T, D>(dv + base, stage, row_stride, k0, seq, [](int) { return 1.0f; });
  __syncthreads();
#pragma unroll
  for (int i = 0; i < kOutPerWarp; ++i) {
    const int t = warp + i * kWarps;
    wmma::store_matrix_sync(stage + (t / (D / kMma)) * kMma * kLdAcc<D> + (t % (D / kMma)) * kMma,
                            dk_acc[i], kLdAcc<D>, wmma::mem_row_major);
  }
  __syncthreads();
  StoreTile<T, D>(dk + base, stage, row_stride, k0, seq, [scale](int) { return scale; });
}

// Backward step 3: dq = the fp32 accumulator rounded to T.
template <typename T>
__global__ void ConvertKernel(const float* __restrict__ src, T* __restrict__ dst, int64_t n) {
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    dst[i] = FromFloat<T>(src[i]);
  }
}

// Bytes of D at the start of the workspace, a multiple of 256 so the dq accumulator stays aligned.
size_t RowDotBytes(const AttentionShape& shape) {
  return (sizeof(float) * static_cast<size_t>(shape.StatRows()) + 255) / 256 * 256;
}

// Calls f(std::integral_constant<int, D>{}) for head_dim D in {64, 128} (checked before).
template <typename F>
Status DispatchHeadDim(int64_t head_dim, F&& f) {
  if (head_dim == 64) return f(std::integral_constant<int, 64>{});
  return f(std::integral_constant<int, 128>{});
}

dim3 AttentionGrid(const AttentionShape& shape) {
  return dim3(static_cast<unsigned>((shape.seq + kTile - 1) / kTile),
              static_cast<unsigned>(shape.heads), static_cast<unsigned>(shape.batch));
}

}  // namespace

Status AttentionSupported(const AttentionShape& shape, DType dtype) {
  GPUPLAN_RETURN_IF_ERROR(CheckShape(shape));
  if (!shape.causal) {
    return Status::Invalid(
        "attention: the CUDA kernel is causal only (the CPU reference runs "
        "non-causal shapes)");
  }
  if (shape.head_dim != 64 && shape.head_dim != 128) {
    return Status::Invalid("attention: head_dim must be 64 or 128, got " +
                           std::to_string(shape.head_dim));
  }
  if (shape.seq >= (int64_t{1} << 30)) {
    return Status::Invalid("attention: seq must be below 2^30, got " + std::to_string(shape.seq));
  }
  if (shape.heads > 65535) {
    return Status::Invalid("attention: heads must be at most 65535 (grid y), got " +
                           std::to_string(shape.heads));
  }
  if (shape.batch > 65535) {
    return Status::Invalid("attention: batch must be at most 65535 (grid z), got " +
                           std::to_string(shape.batch));
  }
  if (dtype == DType::kFp32) return Status::Invalid("attention: dtype must be bf16 or fp16");
  return Status::Ok();
}

size_t AttentionBackwardWorkspaceBytes(const AttentionShape& shape) {
  if (!CheckShape(shape).ok()) return 0;
  return RowDotBytes(shape) + sizeof(float) * static_cast<size_t>(shape.Elements());
}

Status AttentionForward(const AttentionShape& shape, DType dtype, const AttentionForwardArgs& args,
                        cudaStream_t stream) {
  GPUPLAN_RETURN_IF_ERROR(AttentionSupported(shape, dtype));
  GPUPLAN_RETURN_IF_ERROR(CheckNotNull({{"attention q", args.q},
                                        {"attention k", args.k},
                                        {"attention v", args.v},
                                        {"attention o", args.o},
                                        {"attention lse", args.lse}}));
  GPUPLAN_RETURN_IF_ERROR(CheckAligned(
      {{"attention q", args.q}, {"attention k", args.k}, {"attention v", args.v}}, 16));
  const float scale_log2 =
      static_cast<float>(kLog2e / std::sqrt(static_cast<double>(shape.head_dim)));
  return Dispatch16BitDType("attention", dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    return DispatchHeadDim(shape.head_dim, [&](auto dim) {
      constexpr int D = decltype(dim)::value;
      constexpr size_t kSmem = ForwardSmem<T, D>::kBytes;
      GPUPLAN_CUDA_RETURN_IF_ERROR(cudaFuncSetAttribute(AttentionForwardKernel<T, D>,
                                                        cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                        static_cast<int>(kSmem)));
      AttentionForwardKernel<T, D><<<AttentionGrid(shape), kForwardThreads, kSmem, stream>>>(
          static_cast<const T*>(args.q), static_cast<const T*>(args.k),
          static_cast<const T*>(args.v), static_cast<T*>(args.o), args.lse,
          static_cast<int>(shape.seq), static_cast<int>(shape.heads), scale_log2);
      GPUPLAN_CUDA_RETURN_IF_ERROR(cudaGetLastError());
      return Status::Ok();
    });
  });
}

Status AttentionBackward(const AttentionShape& shape, DType dtype,
                         const AttentionBackwardArgs& args, cudaStream_t stream) {
  GPUPLAN_RETURN_IF_ERROR(AttentionSupported(shape, dtype));
  GPUPLAN_RETURN_IF_ERROR(CheckNotNull({{"attention q", args.q},
                                        {"attention k", args.k},
                                        {"attention v", args.v},
                                        {"attention o", args.o},
                                        {"attention d_o", args.d_o},
                                        {"attention lse", args.lse},
                                        {"attention dq", args.dq},
                                        {"attention dk", args.dk},
                                        {"attention dv", args.dv},
                                        {"attention workspace", args.workspace}}));
  GPUPLAN_RETURN_IF_ERROR(CheckAligned({{"attention q", args.q},
                                        {"attention k", args.k},
                                        {"attention v", args.v},
                                        {"attention d_o", args.d_o},
                                        {"attention workspace", args.workspace}},
                                       16));
  const size_t needed = AttentionBackwardWorkspaceBytes(shape);
  if (args.workspace_bytes < needed) {
    return Status::Invalid("attention workspace holds " + std::to_string(args.workspace_bytes) +
                           " bytes, needs " + std::to_string(needed));
  }
  const float scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(shape.head_dim)));
  float* dsum = static_cast<float*>(args.workspace);
  float* dq_acc =
      reinterpret_cast<float*>(static_cast<unsigned char*>(args.workspace) + RowDotBytes(shape));
  const int64_t elements = shape.Elements();
  const int64_t rows = shape.batch * shape.seq * shape.heads;
  return Dispatch16BitDType("attention", dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    return DispatchHeadDim(shape.head_dim, [&](auto dim) {
      constexpr int D = decltype(dim)::value;
      constexpr int kDotThreads = 256;  // 8 warps, one row each per grid-stride step
      const int seq = static_cast<int>(shape.seq);
      const int heads = static_cast<int>(shape.heads);
      GPUPLAN_CUDA_RETURN_IF_ERROR(
          cudaMemsetAsync(dq_acc, 0, sizeof(float) * static_cast<size_t>(elements), stream));
      AttentionRowDotKernel<T, D>
          <<<GridStrideBlocks(rows, kDotThreads / 32), kDotThreads, 0, stream>>>(
              static_cast<const T*>(args.o), static_cast<const T*>(args.d_o), dsum, rows, seq,
              heads);
      GPUPLAN_CUDA_RETURN_IF_ERROR(cudaGetLastError());

      constexpr size_t kSmem = BackwardSmem<T, D>::kBytes;
      GPUPLAN_CUDA_RETURN_IF_ERROR(cudaFuncSetAttribute(AttentionBackwardKernel<T, D>,
                                                        cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                        static_cast<int>(kSmem)));
      AttentionBackwardKernel<T, D><<<AttentionGrid(shape), kBackwardThreads, kSmem, stream>>>(
          static_cast<const T*>(args.q), static_cast<const T*>(args.k),
          static_cast<const T*>(args.v), static_cast<const T*>(args.d_o), args.lse, dsum, dq_acc,
          static_cast<T*>(args.dk), static_cast<T*>(args.dv), seq, heads, scale);
      GPUPLAN_CUDA_RETURN_IF_ERROR(cudaGetLastError());

      ConvertKernel<T><<<GridStrideBlocks(elements, 256), 256, 0, stream>>>(
          dq_acc, static_cast<T*>(args.dq), elements);
      GPUPLAN_CUDA_RETURN_IF_ERROR(cudaGetLastError());
      return Status::Ok();
    });
  });
}

}  // namespace gpuplan::kernels
