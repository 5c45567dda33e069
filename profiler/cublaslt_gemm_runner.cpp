#include "profiler/cublaslt_gemm_runner.h"

#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>

#include "profiler/cublas_check.h"
#include "profiler/cublaslt_handles.h"
#include "profiler/cuda_check.h"
#include "profiler/cuda_resources.h"
#include "profiler/cuda_timing.h"
#include "profiler/device_fill.h"

namespace gpuplan {
namespace {

// How each precision maps onto cublasLtMatmul (cuBLAS documentation, cublasLtMatmul, table of
// supported data types). `min_compute_capability` is 10 * major + minor: TF32 and BF16 tensor
// cores arrive with Ampere (8.0, NVIDIA A100 whitepaper), FP8 with Ada and Hopper (8.9; the
// cuBLASLt FP8 section).
struct GemmTypes {
  Precision precision;
  cudaDataType_t input;   // A and B
  cudaDataType_t output;  // C and D
  cublasComputeType_t compute;
  size_t input_bytes;
  size_t output_bytes;
  int min_compute_capability;
};

constexpr GemmTypes kGemmTypes[] = {
    {Precision::kFp32, CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F, 4, 4, 0},
    {Precision::kTf32, CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32, 4, 4, 80},
    {Precision::kBf16, CUDA_R_16BF, CUDA_R_16BF, CUBLAS_COMPUTE_32F, 2, 2, 80},
    {Precision::kFp16, CUDA_R_16F, CUDA_R_16F, CUBLAS_COMPUTE_32F, 2, 2, 0},
    {Precision::kFp8, CUDA_R_8F_E4M3, CUDA_R_16BF, CUBLAS_COMPUTE_32F, 1, 2, 89},
};

const GemmTypes* FindTypes(Precision p) {
  for (const GemmTypes& t : kGemmTypes) {
    if (t.precision == p) return &t;
  }
  return nullptr;
}

// cuBLASLt FP8 kernels need 16-byte aligned leading dimensions; with the TN layout those are k
// elements of one byte (cuBLAS documentation, cublasLtMatmul, FP8 requirements).
constexpr int64_t kFp8KMultiple = 16;
constexpr size_t kWorkspaceBytes = kCublasLtWorkspaceBytes;

std::string ShapeText(const GemmShape& s) {
  return std::to_string(s.m) + " x " + std::to_string(s.n) + " x " + std::to_string(s.k) +
         " (batch " + std::to_string(s.batch) + ")";
}

// Bytes of `batch` column-major rows x cols matrices of `element_bytes`, or kInvalidInput when
// the product does not fit in size_t.
Expected<size_t> MatrixBytes(int64_t rows, int64_t cols, int64_t batch, size_t element_bytes) {
  size_t bytes = element_bytes;
  for (int64_t factor : {rows, cols, batch}) {
    if (__builtin_mul_overflow(bytes, static_cast<size_t>(factor), &bytes)) {
      return Status::Invalid("GEMM matrix of " + std::to_string(rows) + " x " +
                             std::to_string(cols) + " x batch " + std::to_string(batch) +
                             " is too large");
    }
  }
  return bytes;
}

// A column-major rows x cols layout, strided-batched when batch > 1.
Expected<MatrixLayout> MakeLayout(cudaDataType_t type, int64_t rows, int64_t cols, int64_t batch) {
  cublasLtMatrixLayout_t raw = nullptr;
  GPUPLAN_CUBLAS_RETURN_IF_ERROR(cublasLtMatrixLayoutCreate(&raw, type, static_cast<uint64_t>(rows),
                                                            static_cast<uint64_t>(cols), rows));
  MatrixLayout layout(raw);
  if (batch > 1) {
    const auto count = static_cast<int32_t>(batch);
    const int64_t stride = rows * cols;  // elements between consecutive matrices
    GPUPLAN_CUBLAS_RETURN_IF_ERROR(cublasLtMatrixLayoutSetAttribute(
        raw, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof(count)));
    GPUPLAN_CUBLAS_RETURN_IF_ERROR(cublasLtMatrixLayoutSetAttribute(
        raw, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof(stride)));
  }
  return layout;
}

// The matmul descriptor: op(A) = A^T, op(B) = B, fp32 alpha/beta, and for fp8 the device
// pointers of the A and B per-tensor scales (cuBLASLt requires them; C and D are bf16 and take
// none).
Expected<MatmulDesc> MakeMatmulDesc(const GemmTypes& types, const float* input_scale) {
  cublasLtMatmulDesc_t raw = nullptr;
  GPUPLAN_CUBLAS_RETURN_IF_ERROR(cublasLtMatmulDescCreate(&raw, types.compute, CUDA_R_32F));
  MatmulDesc desc(raw);
  const int32_t transpose = CUBLAS_OP_T, keep = CUBLAS_OP_N;
  GPUPLAN_CUBLAS_RETURN_IF_ERROR(cublasLtMatmulDescSetAttribute(raw, CUBLASLT_MATMUL_DESC_TRANSA,
                                                                &transpose, sizeof(transpose)));
  GPUPLAN_CUBLAS_RETURN_IF_ERROR(
      cublasLtMatmulDescSetAttribute(raw, CUBLASLT_MATMUL_DESC_TRANSB, &keep, sizeof(keep)));
  if (input_scale != nullptr) {
    GPUPLAN_CUBLAS_RETURN_IF_ERROR(cublasLtMatmulDescSetAttribute(
        raw, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &input_scale, sizeof(input_scale)));
    GPUPLAN_CUBLAS_RETURN_IF_ERROR(cublasLtMatmulDescSetAttribute(
        raw, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &input_scale, sizeof(input_scale)));
  }
  return desc;
}

class CublasLtGemmRunner : public GemmRunner {
 public:
  CublasLtGemmRunner(int device, int compute_capability, LtHandle handle, CudaStream stream)
      : device_(device),
        compute_capability_(compute_capability),
        handle_(std::move(handle)),
        stream_(std::move(stream)) {}

  bool Supports(Precision p) const override {
    const GemmTypes* types = FindTypes(p);
    return types != nullptr && compute_capability_ >= types->min_compute_capability;
  }

  Expected<double> Seconds(Precision p, const GemmShape& shape,
                           const TimingPolicy& timing) override {
    const GemmTypes* types = FindTypes(p);
    if (types == nullptr) {
      return Status::Invalid("no GEMM precision " + std::to_string(static_cast<int>(p)));
    }
    const std::string what = std::string(PrecisionName(p)) + " GEMM " + ShapeText(shape);
    if (!Supports(p)) {
      return Status::Invalid(what + ": needs compute capability " +
                             std::to_string(types->min_compute_capability / 10) + "." +
                             std::to_string(types->min_compute_capability % 10) + ", device " +
                             std::to_string(device_) + " has " +
                             std::to_string(compute_capability_ / 10) + "." +
                             std::to_string(compute_capability_ % 10));
    }
    if (shape.m <= 0 || shape.n <= 0 || shape.k <= 0 || shape.batch <= 0 ||
        shape.batch > INT32_MAX) {
      return Status::Invalid(what + ": dimensions must be positive (batch at most 2^31-1)");
    }
    if (p == Precision::kFp8 && shape.k % kFp8KMultiple != 0) {
      return Status::Invalid(what + ": cuBLASLt fp8 needs k a multiple of 16");
    }
    GPUPLAN_CUDA_RETURN_IF_ERROR(cudaSetDevice(device_));
    return Time(*types, shape, timing, what);
  }

 private:
  Expected<double> Time(const GemmTypes& types, const GemmShape& s, const TimingPolicy& timing,
                        const std::string& what) {
    // Column-major storage of the TN problem: A is k x m, B is k x n, C (= D) is m x n.
    Expected<size_t> a_bytes = MatrixBytes(s.k, s.m, s.batch, types.input_bytes);
    if (!a_bytes.ok()) return a_bytes.status();
    Expected<size_t> b_bytes = MatrixBytes(s.k, s.n, s.batch, types.input_bytes);
    if (!b_bytes.ok()) return b_bytes.status();
    Expected<size_t> c_bytes = MatrixBytes(s.m, s.n, s.batch, types.output_bytes);
    if (!c_bytes.ok()) return c_bytes.status();
    Expected<DeviceMemory> a = AllocateDevice(*a_bytes, what + " A");
    if (!a.ok()) return a.status();
    Expected<DeviceMemory> b = AllocateDevice(*b_bytes, what + " B");
    if (!b.ok()) return b.status();
    Expected<DeviceMemory> c = AllocateDevice(*c_bytes, what + " C");
    if (!c.ok()) return c.status();
    Expected<DeviceMemory> workspace = AllocateDevice(kWorkspaceBytes, what + " workspace");
    if (!workspace.ok()) return workspace.status();
    cudaStream_t stream = stream_.get();
    GPUPLAN_RETURN_IF_ERROR(
        FillUniform(a->get(), *a_bytes / types.input_bytes, types.input, 1, stream));
    GPUPLAN_RETURN_IF_ERROR(
        FillUniform(b->get(), *b_bytes / types.input_bytes, types.input, 2, stream));

    // fp8: unit per-tensor scales for A and B, fp32 like the compute type.
    DeviceMemory scale;
    if (types.precision == Precision::kFp8) {
      Expected<DeviceMemory> allocated = AllocateDevice(sizeof(float), what + " scale");
      if (!allocated.ok()) return allocated.status();
      scale = std::move(*allocated);
      const float one = 1.0f;
      // Stream-ordered before the GEMMs; a pageable source is staged before this returns.
      GPUPLAN_CUDA_RETURN_IF_ERROR(
          cudaMemcpyAsync(scale.get(), &one, sizeof(one), cudaMemcpyHostToDevice, stream));
    }
    Expected<MatmulDesc> desc = MakeMatmulDesc(types, static_cast<const float*>(scale.get()));
    if (!desc.ok()) return desc.status();
    Expected<MatrixLayout> a_layout = MakeLayout(types.input, s.k, s.m, s.batch);
    if (!a_layout.ok()) return a_layout.status();
    Expected<MatrixLayout> b_layout = MakeLayout(types.input, s.k, s.n, s.batch);
    if (!b_layout.ok()) return b_layout.status();
    Expected<MatrixLayout> c_layout = MakeLayout(types.output, s.m, s.n, s.batch);
    if (!c_layout.ok()) return c_layout.status();

    Expected<cublasLtMatmulAlgo_t> algo = BestAlgo(handle_.get(), desc->get(), a_layout->get(),
                                                   b_layout->get(), c_layout->get(), what);
    if (!algo.ok()) return algo.status();

    // D = alpha * op(A) op(B) + beta * C written in place over C (beta = 0: C is not read).
    const float alpha = 1.0f, beta = 0.0f;
    return TimeOnStream(stream, timing, [&]() {
      return CublasStatus(
          cublasLtMatmul(handle_.get(), desc->get(), &alpha, a->get(), a_layout->get(), b->get(),
                         b_layout->get(), &beta, c->get(), c_layout->get(), c->get(),
                         c_layout->get(), &*algo, workspace->get(), kWorkspaceBytes, stream),
          "cublasLtMatmul", __FILE__, __LINE__);
    });
  }

  int device_;
  int compute_capability_;  // 10 * major + minor
  LtHandle handle_;
  CudaStream stream_;
};

}  // namespace

Expected<cublasLtMatmulAlgo_t> BestAlgo(cublasLtHandle_t handle, cublasLtMatmulDesc_t desc,
                                        cublasLtMatrixLayout_t a, cublasLtMatrixLayout_t b,
                                        cublasLtMatrixLayout_t c, const std::string& what) {
  cublasLtMatmulPreference_t raw = nullptr;
  GPUPLAN_CUBLAS_RETURN_IF_ERROR(cublasLtMatmulPreferenceCreate(&raw));
  const MatmulPreference preference(raw);
  const uint64_t workspace_bytes = kWorkspaceBytes;
  GPUPLAN_CUBLAS_RETURN_IF_ERROR(cublasLtMatmulPreferenceSetAttribute(
      raw, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace_bytes, sizeof(workspace_bytes)));
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  const cublasStatus_t status =
      cublasLtMatmulAlgoGetHeuristic(handle, desc, a, b, c, c, raw, 1, &result, &found);
  if (status == CUBLAS_STATUS_NOT_SUPPORTED || (status == CUBLAS_STATUS_SUCCESS && found == 0)) {
    return Status::Invalid(what + ": cuBLASLt has no algorithm for this problem");
  }
  GPUPLAN_RETURN_IF_ERROR(
      CublasStatus(status, "cublasLtMatmulAlgoGetHeuristic", __FILE__, __LINE__));
  return result.algo;
}

Expected<std::unique_ptr<GemmRunner>> MakeCublasLtGemmRunner(int device) {
  GPUPLAN_CUDA_RETURN_IF_ERROR(cudaSetDevice(device));
  int major = 0, minor = 0;
  GPUPLAN_CUDA_RETURN_IF_ERROR(
      cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  GPUPLAN_CUDA_RETURN_IF_ERROR(
      cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
  cublasLtHandle_t raw = nullptr;
  GPUPLAN_CUBLAS_RETURN_IF_ERROR(cublasLtCreate(&raw));
  LtHandle handle(raw);
  Expected<CudaStream> stream = CreateStream();
  if (!stream.ok()) return stream.status();
  return std::unique_ptr<GemmRunner>(std::make_unique<CublasLtGemmRunner>(
      device, 10 * major + minor, std::move(handle), std::move(*stream)));
}

}  // namespace gpuplan
