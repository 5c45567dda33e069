#include "kernels/reference_attention.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace gpuplan::kernels {
namespace {

template <typename T>
T Dot(const T* a, const T* b, int64_t n) {
  T s = 0;
  for (int64_t c = 0; c < n; ++c) s += a[c] * b[c];
  return s;
}

template <typename T>
Status CheckInputs(const AttentionShape& shape, std::span<const T> q, std::span<const T> k,
                   std::span<const T> v) {
  GPUPLAN_RETURN_IF_ERROR(CheckShape(shape));
  GPUPLAN_RETURN_IF_ERROR(CheckSize("q", q.size(), shape.Elements()));
  GPUPLAN_RETURN_IF_ERROR(CheckSize("k", k.size(), shape.KvElements()));
  return CheckSize("v", v.size(), shape.KvElements());
}

}  // namespace

template <typename T>
Status ReferenceAttentionForwardInto(const AttentionShape& shape, std::span<const T> q,
                                     std::span<const T> k, std::span<const T> v, std::span<T> o,
                                     std::span<T> lse) {
  GPUPLAN_RETURN_IF_ERROR(CheckInputs(shape, q, k, v));
  GPUPLAN_RETURN_IF_ERROR(CheckSize("o", o.size(), shape.Elements()));
  GPUPLAN_RETURN_IF_ERROR(CheckSize("lse", lse.size(), shape.StatRows()));
  const int64_t d = shape.head_dim;
  const T scale = T(1) / std::sqrt(static_cast<T>(d));
  std::vector<T> acc(static_cast<size_t>(d));
  for (int64_t b = 0; b < shape.batch; ++b) {
    for (int64_t h = 0; h < shape.heads; ++h) {
      for (int64_t i = 0; i < shape.seq; ++i) {
        const T* qi = q.data() + shape.Offset(b, i, h);
        // Online softmax: running max m, running sum l of exp(s - m), acc = sum exp(s - m) v.
        T m = -std::numeric_limits<T>::infinity();
        T l = 0;
        std::fill(acc.begin(), acc.end(), T(0));
        const int64_t keys = shape.causal ? i + 1 : shape.KvSeq();
        for (int64_t j = 0; j < keys; ++j) {
          const T s = scale * Dot(qi, k.data() + shape.KvOffset(b, j, h), d);
          const T m_new = std::max(m, s);
          const T alpha = std::exp(m - m_new);
          const T p = std::exp(s - m_new);
          const T* vj = v.data() + shape.KvOffset(b, j, h);
          for (int64_t c = 0; c < d; ++c) acc[c] = alpha * acc[c] + p * vj[c];
          l = alpha * l + p;
          m = m_new;
        }
        T* oi = o.data() + shape.Offset(b, i, h);
        for (int64_t c = 0; c < d; ++c) oi[c] = acc[c] / l;
        lse[shape.StatOffset(b, h, i)] = m + std::log(l);
      }
    }
  }
  return Status::Ok();
}

template <typename T>
Status ReferenceAttentionBackwardInto(const AttentionShape& shape, std::span<const T> q,
                                      std::span<const T> k, std::span<const T> v,
                                      std::span<const T> o, std::span<const T> d_o,
                                      std::span<const T> lse, std::span<T> dq, std::span<T> dk,
                                      std::span<T> dv) {
  GPUPLAN_RETURN_IF_ERROR(CheckInputs(shape, q, k, v));
  GPUPLAN_RETURN_IF_ERROR(CheckSize("o", o.size(), shape.Elements()));
  GPUPLAN_RETURN_IF_ERROR(CheckSize("d_o", d_o.size(), shape.Elements()));
  GPUPLAN_RETURN_IF_ERROR(CheckSize("lse", lse.size(), shape.StatRows()));
  GPUPLAN_RETURN_IF_ERROR(CheckSize("dq", dq.size(), shape.Elements()));
  GPUPLAN_RETURN_IF_ERROR(CheckSize("dk", dk.size(), shape.KvElements()));
  GPUPLAN_RETURN_IF_ERROR(CheckSize("dv", dv.size(), shape.KvElements()));
  const int64_t d = shape.head_dim;
  const T scale = T(1) / std::sqrt(static_cast<T>(d));
  std::fill(dq.begin(), dq.end(), T(0));
  std::fill(dk.begin(), dk.end(), T(0));
  std::fill(dv.begin(), dv.end(), T(0));
  for (int64_t b = 0; b < shape.batch; ++b) {
    for (int64_t h = 0; h < shape.heads; ++h) {
      for (int64_t i = 0; i < shape.seq; ++i) {
        const int64_t oi = shape.Offset(b, i, h);
        const T di = Dot(d_o.data() + oi, o.data() + oi, d);
        const T lse_i = lse[shape.StatOffset(b, h, i)];
        const int64_t keys = shape.causal ? i + 1 : shape.KvSeq();
        for (int64_t j = 0; j < keys; ++j) {
          const int64_t oj = shape.KvOffset(b, j, h);
          const T p = std::exp(scale * Dot(q.data() + oi, k.data() + oj, d) - lse_i);
          const T dp = Dot(d_o.data() + oi, v.data() + oj, d);
          const T ds = p * (dp - di);
          for (int64_t c = 0; c < d; ++c) {
            dv[oj + c] += p * d_o[oi + c];
            dq[oi + c] += scale * ds * k[oj + c];
            dk[oj + c] += scale * ds * q[oi + c];
          }
        }
      }
    }
  }
  return Status::Ok();
}

template <typename T>
Status ReferenceAttentionMergeInto(const AttentionShape& shape, std::span<const T> o_part,
                                   std::span<const T> lse_part, std::span<T> o, std::span<T> lse) {
  GPUPLAN_RETURN_IF_ERROR(CheckShape(shape));
  GPUPLAN_RETURN_IF_ERROR(CheckSize("o_part", o_part.size(), shape.Elements()));
  GPUPLAN_RETURN_IF_ERROR(CheckSize("lse_part", lse_part.size(), shape.StatRows()));
  GPUPLAN_RETURN_IF_ERROR(CheckSize("o", o.size(), shape.Elements()));
  GPUPLAN_RETURN_IF_ERROR(CheckSize("lse", lse.size(), shape.StatRows()));
  const int64_t d = shape.head_dim;
  for (int64_t b = 0; b < shape.batch; ++b) {
    for (int64_t h = 0; h < shape.heads; ++h) {
      for (int64_t i = 0; i < shape.seq; ++i) {
        T& l = lse[shape.StatOffset(b, h, i)];
        const T l_part = lse_part[shape.StatOffset(b, h, i)];
        // lse' = log(e^lse + e^lse_part), computed from the larger one so neither overflows.
        const T m = std::max(l, l_part);
        const T merged = m + std::log(std::exp(l - m) + std::exp(l_part - m));
        const T keep = std::exp(l - merged);
        const T add = std::exp(l_part - merged);
        T* oi = o.data() + shape.Offset(b, i, h);
        const T* pi = o_part.data() + shape.Offset(b, i, h);
        for (int64_t c = 0; c < d; ++c) oi[c] = keep * oi[c] + add * pi[c];
        l = merged;
      }
    }
  }
  return Status::Ok();
}

Expected<AttentionForwardResult> ReferenceAttentionForward(const AttentionShape& shape,
                                                           std::span<const double> q,
                                                           std::span<const double> k,
                                                           std::span<const double> v) {
  GPUPLAN_RETURN_IF_ERROR(CheckShape(shape));
  AttentionForwardResult r;
  r.o.resize(static_cast<size_t>(shape.Elements()));
  r.lse.resize(static_cast<size_t>(shape.StatRows()));
  GPUPLAN_RETURN_IF_ERROR(ReferenceAttentionForwardInto<double>(shape, q, k, v, r.o, r.lse));
  return r;
}

Expected<AttentionGradients> ReferenceAttentionBackward(
    const AttentionShape& shape, std::span<const double> q, std::span<const double> k,
    std::span<const double> v, std::span<const double> o, std::span<const double> d_o,
    std::span<const double> lse) {
  GPUPLAN_RETURN_IF_ERROR(CheckShape(shape));
  AttentionGradients g;
  g.dq.resize(static_cast<size_t>(shape.Elements()));
  g.dk.resize(static_cast<size_t>(shape.KvElements()));
  g.dv.resize(g.dk.size());
  GPUPLAN_RETURN_IF_ERROR(
      ReferenceAttentionBackwardInto<double>(shape, q, k, v, o, d_o, lse, g.dq, g.dk, g.dv));
  return g;
}

template Status ReferenceAttentionForwardInto<float>(const AttentionShape&, std::span<const float>,
                                                     std::span<const float>, std::span<const float>,
                                                     std::span<float>, std::span<float>);
template Status ReferenceAttentionBackwardInto<float>(
    const AttentionShape&, std::span<const float>, std::span<const float>, std::span<const float>,
    std::span<const float>, std::span<const float>, std::span<const float>, std::span<float>,
    std::span<float>, std::span<float>);
template Status ReferenceAttentionMergeInto<float>(const AttentionShape&, std::span<const float>,
                                                   std::span<const float>, std::span<float>,
                                                   std::span<float>);
template Status ReferenceAttentionMergeInto<double>(const AttentionShape&, std::span<const double>,
                                                    std::span<const double>, std::span<double>,
                                                    std::span<double>);

}  // namespace gpuplan::kernels
