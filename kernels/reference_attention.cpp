#include "kernels/reference_attention.h"

#include <cmath>
#include <limits>

namespace gpuplan::kernels {
namespace {

double Dot(const double* a, const double* b, int64_t n) {
  double s = 0;
  for (int64_t c = 0; c < n; ++c) s += a[c] * b[c];
  return s;
}

Status CheckInputs(const AttentionShape& shape, std::span<const double> q,
                   std::span<const double> k, std::span<const double> v) {
  GPUPLAN_RETURN_IF_ERROR(CheckShape(shape));
  GPUPLAN_RETURN_IF_ERROR(CheckSize("q", q.size(), shape.Elements()));
  GPUPLAN_RETURN_IF_ERROR(CheckSize("k", k.size(), shape.Elements()));
  return CheckSize("v", v.size(), shape.Elements());
}

}  // namespace

Expected<AttentionForwardResult> ReferenceAttentionForward(const AttentionShape& shape,
                                                           std::span<const double> q,
                                                           std::span<const double> k,
                                                           std::span<const double> v) {
  GPUPLAN_RETURN_IF_ERROR(CheckInputs(shape, q, k, v));
  const int64_t d = shape.head_dim;
  const double scale = 1.0 / std::sqrt(static_cast<double>(d));
  AttentionForwardResult r;
  r.o.assign(static_cast<size_t>(shape.Elements()), 0.0);
  r.lse.assign(static_cast<size_t>(shape.StatRows()), 0.0);
  std::vector<double> acc(static_cast<size_t>(d));
  for (int64_t b = 0; b < shape.batch; ++b) {
    for (int64_t h = 0; h < shape.heads; ++h) {
      for (int64_t i = 0; i < shape.seq; ++i) {
        const double* qi = q.data() + shape.Offset(b, i, h);
        // Online softmax: running max m, running sum l of exp(s - m), acc = sum exp(s - m) v.
        double m = -std::numeric_limits<double>::infinity();
        double l = 0;
        acc.assign(acc.size(), 0.0);
        for (int64_t j = 0; j <= i; ++j) {
          const double s = scale * Dot(qi, k.data() + shape.Offset(b, j, h), d);
          const double m_new = std::max(m, s);
          const double alpha = std::exp(m - m_new);
          const double p = std::exp(s - m_new);
          const double* vj = v.data() + shape.Offset(b, j, h);
          for (int64_t c = 0; c < d; ++c) acc[c] = alpha * acc[c] + p * vj[c];
          l = alpha * l + p;
          m = m_new;
        }
        double* oi = r.o.data() + shape.Offset(b, i, h);
        for (int64_t c = 0; c < d; ++c) oi[c] = acc[c] / l;
        r.lse[shape.StatOffset(b, h, i)] = m + std::log(l);
      }
    }
  }
  return r;
}

Expected<AttentionGradients> ReferenceAttentionBackward(
    const AttentionShape& shape, std::span<const double> q, std::span<const double> k,
    std::span<const double> v, std::span<const double> o, std::span<const double> d_o,
    std::span<const double> lse) {
  GPUPLAN_RETURN_IF_ERROR(CheckInputs(shape, q, k, v));
  GPUPLAN_RETURN_IF_ERROR(CheckSize("o", o.size(), shape.Elements()));
  GPUPLAN_RETURN_IF_ERROR(CheckSize("d_o", d_o.size(), shape.Elements()));
  GPUPLAN_RETURN_IF_ERROR(CheckSize("lse", lse.size(), shape.StatRows()));
  const int64_t d = shape.head_dim;
  const double scale = 1.0 / std::sqrt(static_cast<double>(d));
  AttentionGradients g;
  g.dq.assign(static_cast<size_t>(shape.Elements()), 0.0);
  g.dk.assign(g.dq.size(), 0.0);
  g.dv.assign(g.dq.size(), 0.0);
  for (int64_t b = 0; b < shape.batch; ++b) {
    for (int64_t h = 0; h < shape.heads; ++h) {
      for (int64_t i = 0; i < shape.seq; ++i) {
        const int64_t oi = shape.Offset(b, i, h);
        const double di = Dot(d_o.data() + oi, o.data() + oi, d);
        const double lse_i = lse[shape.StatOffset(b, h, i)];
        for (int64_t j = 0; j <= i; ++j) {
          const int64_t oj = shape.Offset(b, j, h);
          const double p = std::exp(scale * Dot(q.data() + oi, k.data() + oj, d) - lse_i);
          const double dp = Dot(d_o.data() + oi, v.data() + oj, d);
          const double ds = p * (dp - di);
          for (int64_t c = 0; c < d; ++c) {
            g.dv[oj + c] += p * d_o[oi + c];
            g.dq[oi + c] += scale * ds * k[oj + c];
            g.dk[oj + c] += scale * ds * q[oi + c];
          }
        }
      }
    }
  }
  return g;
}

}  // namespace gpuplan::kernels
