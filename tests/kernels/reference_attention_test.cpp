// The float64 attention reference: against a naive full-softmax attention, known values, and
// finite differences of its backward.
#include "kernels/reference_attention.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "tests/kernels/finite_difference.h"

namespace gpuplan::kernels {
namespace {

// Textbook causal attention: the full [seq, seq] score matrix with -inf above the diagonal,
// softmax per row, times V (Vaswani et al. 2017, Eq. 1).
AttentionForwardResult NaiveAttention(const AttentionShape& s, const std::vector<double>& q,
                                      const std::vector<double>& k, const std::vector<double>& v) {
  const double scale = 1.0 / std::sqrt(static_cast<double>(s.head_dim));
  AttentionForwardResult r;
  r.o.assign(q.size(), 0.0);
  r.lse.assign(static_cast<size_t>(s.StatRows()), 0.0);
  std::vector<double> scores(static_cast<size_t>(s.seq * s.seq));
  for (int64_t b = 0; b < s.batch; ++b) {
    for (int64_t h = 0; h < s.heads; ++h) {
      for (int64_t i = 0; i < s.seq; ++i) {
        for (int64_t j = 0; j < s.seq; ++j) {
          double dot = 0;
          for (int64_t c = 0; c < s.head_dim; ++c) {
            dot += q[s.Offset(b, i, h) + c] * k[s.Offset(b, j, h) + c];
          }
          scores[i * s.seq + j] = j <= i ? scale * dot : -std::numeric_limits<double>::infinity();
        }
      }
      for (int64_t i = 0; i < s.seq; ++i) {
        double m = -std::numeric_limits<double>::infinity();
        for (int64_t j = 0; j < s.seq; ++j) m = std::max(m, scores[i * s.seq + j]);
        double sum = 0;
        for (int64_t j = 0; j < s.seq; ++j) sum += std::exp(scores[i * s.seq + j] - m);
        for (int64_t j = 0; j < s.seq; ++j) {
          const double p = std::exp(scores[i * s.seq + j] - m) / sum;
          for (int64_t c = 0; c < s.head_dim; ++c) {
            r.o[s.Offset(b, i, h) + c] += p * v[s.Offset(b, j, h) + c];
          }
        }
        r.lse[s.StatOffset(b, h, i)] = m + std::log(sum);
      }
    }
  }
  return r;
}

TEST(ReferenceAttentionTest, MatchesNaiveFullSoftmax) {
  const AttentionShape shape{2, 9, 3, 5};
  const size_t n = static_cast<size_t>(shape.Elements());
  const std::vector<double> q = UniformValues(n, -2, 2, 1);
  const std::vector<double> k = UniformValues(n, -2, 2, 2);
  const std::vector<double> v = UniformValues(n, -1, 1, 3);
  Expected<AttentionForwardResult> got = ReferenceAttentionForward(shape, q, k, v);
  ASSERT_TRUE(got.ok()) << got.status().message();
  const AttentionForwardResult want = NaiveAttention(shape, q, k, v);
  ExpectAllNear("o", got->o, want.o, 1e-12);
  ExpectAllNear("lse", got->lse, want.lse, 1e-12);
}

TEST(ReferenceAttentionTest, FirstQuerySeesOnlyTheFirstKey) {
  const AttentionShape shape{1, 4, 1, 4};
  const size_t n = static_cast<size_t>(shape.Elements());
  const std::vector<double> q = UniformValues(n, -1, 1, 4);
  const std::vector<double> k = UniformValues(n, -1, 1, 5);
  const std::vector<double> v = UniformValues(n, -1, 1, 6);
  Expected<AttentionForwardResult> r = ReferenceAttentionForward(shape, q, k, v);
  ASSERT_TRUE(r.ok()) << r.status().message();
  for (int c = 0; c < 4; ++c) EXPECT_NEAR(r->o[c], v[c], 1e-15);
  // lse of one score is the score itself: scale q0.k0, scale = 1/sqrt(4).
  EXPECT_NEAR(r->lse[0], 0.5 * (q[0] * k[0] + q[1] * k[1] + q[2] * k[2] + q[3] * k[3]), 1e-15);
}

TEST(ReferenceAttentionTest, BackwardMatchesFiniteDifferences) {
  const AttentionShape shape{2, 5, 2, 3};
  const size_t n = static_cast<size_t>(shape.Elements());
  const std::vector<double> q = UniformValues(n, -2, 2, 7);
  const std::vector<double> k = UniformValues(n, -2, 2, 8);
  const std::vector<double> v = UniformValues(n, -1, 1, 9);
  // L = sum(O * W), so dL/dO = W.
  const std::vector<double> w = UniformValues(n, -1, 1, 10);
  Expected<AttentionForwardResult> fwd = ReferenceAttentionForward(shape, q, k, v);
  ASSERT_TRUE(fwd.ok()) << fwd.status().message();
  Expected<AttentionGradients> grads =
      ReferenceAttentionBackward(shape, q, k, v, fwd->o, w, fwd->lse);
  ASSERT_TRUE(grads.ok()) << grads.status().message();

  // Loss as a function of one of q, k, v (which = 0, 1, 2) with the others fixed.
  auto loss = [&](int which) {
    return [&, which](std::span<const double> x) {
      const std::vector<double> var(x.begin(), x.end());
      Expected<AttentionForwardResult> r = ReferenceAttentionForward(
          shape, which == 0 ? var : q, which == 1 ? var : k, which == 2 ? var : v);
      return Dot(r->o, w);
    };
  };
  ExpectAllNear("dq", grads->dq, NumericalGradient(loss(0), q), 1e-7);
  ExpectAllNear("dk", grads->dk, NumericalGradient(loss(1), k), 1e-7);
  ExpectAllNear("dv", grads->dv, NumericalGradient(loss(2), v), 1e-7);
}

TEST(ReferenceAttentionTest, RejectsWrongSizes) {
  const AttentionShape shape{1, 4, 1, 4};
  const std::vector<double> x(16, 0.0);
  const std::vector<double> short_x(15, 0.0);
  EXPECT_EQ(ReferenceAttentionForward(shape, x, short_x, x).status().kind(),
            ErrorKind::kInvalidInput);
  EXPECT_EQ(ReferenceAttentionForward({1, 0, 1, 4}, x, x, x).status().kind(),
            ErrorKind::kInvalidInput);
  const std::vector<double> lse(3, 0.0);
  EXPECT_EQ(ReferenceAttentionBackward(shape, x, x, x, x, x, lse).status().kind(),
            ErrorKind::kInvalidInput);
}

}  // namespace
}  // namespace gpuplan::kernels
