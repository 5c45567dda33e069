// RAII owners of cuBLASLt objects, each destroyed with its library function, and the algorithm
// choice: shared by the profiler's GEMM runner and the validator's GPU compute.
#pragma once

#include <cublasLt.h>

#include <cstddef>
#include <memory>
#include <string>
#include <type_traits>

#include "common/status.h"

namespace gpuplan {

template <typename Handle, cublasStatus_t (*Destroy)(Handle)>
struct LtDeleter {
  void operator()(Handle h) const { Destroy(h); }
};
template <typename Handle, cublasStatus_t (*Destroy)(Handle)>
using LtOwner = std::unique_ptr<std::remove_pointer_t<Handle>, LtDeleter<Handle, Destroy>>;
using LtHandle = LtOwner<cublasLtHandle_t, cublasLtDestroy>;
using MatmulDesc = LtOwner<cublasLtMatmulDesc_t, cublasLtMatmulDescDestroy>;
using MatrixLayout = LtOwner<cublasLtMatrixLayout_t, cublasLtMatrixLayoutDestroy>;
using MatmulPreference = LtOwner<cublasLtMatmulPreference_t, cublasLtMatmulPreferenceDestroy>;

/// Workspace for split-K and stream-K algorithms: 32 MiB, the size the cuBLAS documentation
/// recommends for Hopper (cublasSetWorkspace).
inline constexpr size_t kCublasLtWorkspaceBytes = 32u << 20;

/// The first algorithm cublasLtMatmulAlgoGetHeuristic proposes for D = op(A) op(B) written over
/// C (D has C's layout), with kCublasLtWorkspaceBytes of workspace; Invalid naming `what` when
/// cuBLASLt has none for the problem.
Expected<cublasLtMatmulAlgo_t> BestAlgo(cublasLtHandle_t handle, cublasLtMatmulDesc_t desc,
                                        cublasLtMatrixLayout_t a, cublasLtMatrixLayout_t b,
                                        cublasLtMatrixLayout_t c, const std::string& what);

}  // namespace gpuplan
