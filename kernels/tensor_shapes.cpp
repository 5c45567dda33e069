#include "kernels/tensor_shapes.h"

#include <string>

namespace gpuplan::kernels {
namespace {

constexpr int64_t kMaxElements = int64_t{1} << 62;

// Ok when 0 < value and the running product stays below kMaxElements.
Status CheckDim(std::string_view what, std::string_view dim, int64_t value, int64_t* product) {
  if (value <= 0) {
    return Status::Invalid(std::string(what) + ": " + std::string(dim) + " must be positive, got " +
                           std::to_string(value));
  }
  if (*product > kMaxElements / value) {
    return Status::Invalid(std::string(what) + ": too many elements at " + std::string(dim) +
                           " = " + std::to_string(value));
  }
  *product *= value;
  return Status::Ok();
}

}  // namespace

Status CheckShape(const AttentionShape& shape) {
  int64_t n = 1;
  GPUPLAN_RETURN_IF_ERROR(CheckDim("attention shape", "batch", shape.batch, &n));
  GPUPLAN_RETURN_IF_ERROR(CheckDim("attention shape", "seq", shape.seq, &n));
  GPUPLAN_RETURN_IF_ERROR(CheckDim("attention shape", "heads", shape.heads, &n));
  GPUPLAN_RETURN_IF_ERROR(CheckDim("attention shape", "head_dim", shape.head_dim, &n));
  if (shape.kv_seq < 0) {
    return Status::Invalid("attention shape: kv_seq must be 0 (= seq) or positive, got " +
                           std::to_string(shape.kv_seq));
  }
  int64_t kv = shape.batch * shape.heads * shape.head_dim;
  GPUPLAN_RETURN_IF_ERROR(CheckDim("attention shape", "kv_seq", shape.KvSeq(), &kv));
  if (shape.causal && shape.KvSeq() != shape.seq) {
    return Status::Invalid("attention shape: a causal shape needs kv_seq = seq (" +
                           std::to_string(shape.seq) + "), got " + std::to_string(shape.kv_seq));
  }
  return Status::Ok();
}

Status CheckShape(const MatrixShape& shape) {
  int64_t n = 1;
  GPUPLAN_RETURN_IF_ERROR(CheckDim("matrix shape", "rows", shape.rows, &n));
  return CheckDim("matrix shape", "cols", shape.cols, &n);
}

Status CheckElementCount(std::string_view name, int64_t n) {
  int64_t product = 1;
  return CheckDim(name, "element count", n, &product);
}

Status CheckSize(std::string_view name, size_t size, int64_t expected) {
  if (expected < 0 || size != static_cast<size_t>(expected)) {
    return Status::Invalid(std::string(name) + " holds " + std::to_string(size) +
                           " elements, the shape needs " + std::to_string(expected));
  }
  return Status::Ok();
}

}  // namespace gpuplan::kernels
