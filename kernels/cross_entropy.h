// Fused softmax cross-entropy on the GPU: per-row loss and the logit gradient of the mean loss.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "common/status.h"
#include "kernels/dtype.h"
#include "kernels/tensor_shapes.h"

namespace gpuplan::kernels {

/// Device buffers of CrossEntropy. logits: [rows, cols = vocab] in the dtype; labels: int64
/// [rows], each in [0, vocab); loss: fp32 [rows]; dlogits: [rows, vocab] in the dtype, may be
/// the same buffer as logits (in-place backward) but must not partially overlap it.
struct CrossEntropyArgs {
  const void* logits = nullptr;
  const int64_t* labels = nullptr;
  float* loss = nullptr;
  void* dlogits = nullptr;
};

/// loss_r = logsumexp(z_r) - z_r[label_r] and dlogits_r = (softmax(z_r) - onehot(label_r)) / rows,
/// the gradient of the mean loss over rows (Goodfellow et al. 2016, Sec. 6.2.2.3). One thread
/// block per row: one read of the row for its max and sum of exponentials together (online
/// softmax, Milakov & Gimelshein 2018, Algorithm 3), a second read to write the gradient; fp32
/// arithmetic. The mean loss is the caller's sum of `loss` / rows. A label outside [0, vocab) is
/// not checked on the host: its row gets a NaN loss and a gradient without the one-hot term.
/// dtype fp32, bf16 or fp16; rows below 2^31. Invalid (naming the argument) before any launch; a
/// CUDA failure is Unavailable.
Status CrossEntropy(const MatrixShape& shape, DType dtype, const CrossEntropyArgs& args,
                    cudaStream_t stream);

}  // namespace gpuplan::kernels
