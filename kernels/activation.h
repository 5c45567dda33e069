// Elementwise MLP activations on the GPU: GELU (tanh approximation) and SwiGLU, forward and
// backward.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "common/status.h"
#include "kernels/dtype.h"

namespace gpuplan::kernels {

// All functions: every buffer holds n elements of `dtype` (fp32, bf16 or fp16; a [rows, cols]
// activation is n = rows x cols contiguous elements), computed in fp32, outputs may alias the
// same-index input (each element is read before it is written). Invalid (naming the argument)
// for n <= 0, a null pointer or an unknown dtype, before any launch; a CUDA failure is
// Unavailable. Enqueue on `stream`, no synchronisation.

/// y = gelu(x) with the tanh approximation (Hendrycks & Gimpel 2016, Sec. 2):
/// 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
Status GeluForward(int64_t n, DType dtype, const void* x, void* y, cudaStream_t stream);

/// dx = dy * gelu'(x), the derivative of the same approximation (see GeluDerivative in
/// kernels/reference_activation.h).
Status GeluBackward(int64_t n, DType dtype, const void* x, const void* dy, void* dx,
                    cudaStream_t stream);

/// out = silu(gate) * up, silu(g) = g sigmoid(g) (SwiGLU, Shazeer 2020, Eq. 6); gate and up
/// separate buffers.
Status SwiGluForward(int64_t n, DType dtype, const void* gate, const void* up, void* out,
                     cudaStream_t stream);

/// With s = sigmoid(gate): dgate = dy up s (1 + gate (1 - s)), dup = dy gate s.
Status SwiGluBackward(int64_t n, DType dtype, const void* gate, const void* up, const void* dy,
                      void* dgate, void* dup, cudaStream_t stream);

}  // namespace gpuplan::kernels
