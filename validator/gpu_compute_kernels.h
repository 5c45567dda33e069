// The few device kernels the GPU backend's compute needs beyond kernels/ (issue 19): the
// embedding's row gather and scatter-add, the cross-entropy labels, and the copy of updated fp32
// master weights into the model's precision. Each enqueues on `stream` and does not synchronise;
// Invalid for a non-positive size or a null pointer, Unavailable for a CUDA failure.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "common/status.h"
#include "kernels/dtype.h"

namespace gpuplan {

/// out[i, :] = table[(i * 7919) mod vocab, :] for i < rows (the rows the CPU backend reads); table
/// [vocab, cols], out [rows, cols], both in `dtype`.
Status EmbeddingGather(kernels::DType dtype, const void* table, int64_t vocab, int64_t rows,
                       int64_t cols, void* out, cudaStream_t stream);

/// grad[(i * 7919) mod vocab, :] += dy[i, :] for i < rows (fp32 atomics: rows that share a table
/// row add up); dy [rows, cols] in `dtype`, grad fp32 [vocab, cols].
Status EmbeddingScatterAdd(kernels::DType dtype, const void* dy, int64_t vocab, int64_t rows,
                           int64_t cols, float* grad, cudaStream_t stream);

/// labels[i] = (i * 7919) mod vocab for i < rows.
Status FillLabels(int64_t* labels, int64_t rows, int64_t vocab, cudaStream_t stream);

/// out[i] = in[i] rounded to `dtype` for i < n.
Status CastFromFloat(kernels::DType dtype, const float* in, int64_t n, void* out,
                     cudaStream_t stream);

}  // namespace gpuplan
