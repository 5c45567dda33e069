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

// Textbook attention: the full [seq, kv_seq] score matrix, -inf above the diagonal when causal,
// softmax per row, times V (Vaswani et al. 2017, Eq. 1).
AttentionForwardResult NaiveAttention(const AttentionShape& s, const std::vector<double>& q,
                                      const std::vector<double>& k, const std::vector<double>& v) {
  const double scale = 1.0 / std::sqrt(static_cast<double>(s.head_dim));
  const int64_t keys = s.KvSeq();
  AttentionForwardResult r;
  r.o.assign(q.size(), 0.0);
  r.lse.assign(static_cast<size_t>(s.StatRows()), 0.0);
  std::vector<double> scores(static_cast<size_t>(s.seq * keys));
  for (int64_t b = 0; b < s.batch; ++b) {
    for (int64_t h = 0; h < s.heads; ++h) {
      for (int64_t i = 0; i < s.seq; ++i) {
        for (int64_t j = 0; j < keys; ++j) {
          double dot = 0;
          for (int64_t c = 0; c < s.head_dim; ++c) {
            dot += q[s.Offset(b, i, h) + c] * k[s.KvOffset(b, j, h) + c];
          }
          scores[i * keys + j] =
              !s.causal || j <= i ? scale * dot : -std::numeric_limits<double>::infinity();
        }
      }
      for (int64_t i = 0; i < s.seq; ++i) {
        double m = -std::numeric_limits<double>::infinity();
        for (int64_t j = 0; j < keys; ++j) m = std::max(m, scores[i * keys + j]);
        double sum = 0;
        for (int64_t j = 0; j < keys; ++j) sum += std::exp(scores[i * keys + j] - m);
        for (int64_t j = 0; j < keys; ++j) {
          const double p = std::exp(scores[i * keys + j] - m) / sum;
          for (int64_t c = 0; c < s.head_dim; ++c) {
            r.o[s.Offset(b, i, h) + c] += p * v[s.KvOffset(b, j, h) + c];
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

// The backward of `shape` against finite differences of the forward's loss L = sum(O * W)
// (dL/dO = W), inputs drawn from `seed`.
void ExpectBackwardMatchesFiniteDifferences(const AttentionShape& shape, unsigned seed) {
  const size_t n = static_cast<size_t>(shape.Elements());
  const size_t kv = static_cast<size_t>(shape.KvElements());
  const std::vector<double> q = UniformValues(n, -2, 2, seed);
  const std::vector<double> k = UniformValues(kv, -2, 2, seed + 1);
  const std::vector<double> v = UniformValues(kv, -1, 1, seed + 2);
  const std::vector<double> w = UniformValues(n, -1, 1, seed + 3);
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

TEST(ReferenceAttentionTest, BackwardMatchesFiniteDifferences) {
  ExpectBackwardMatchesFiniteDifferences({2, 5, 2, 3}, 7);
}

TEST(ReferenceAttentionTest, NonCausalBackwardMatchesFiniteDifferences) {
  AttentionShape shape{1, 4, 2, 3};
  shape.kv_seq = 2;
  shape.causal = false;
  ExpectBackwardMatchesFiniteDifferences(shape, 31);
}

TEST(ReferenceAttentionTest, NonCausalMatchesNaiveFullSoftmax) {
  AttentionShape shape{2, 6, 3, 5};
  shape.kv_seq = 4;
  shape.causal = false;
  const std::vector<double> q = UniformValues(static_cast<size_t>(shape.Elements()), -2, 2, 11);
  const std::vector<double> k = UniformValues(static_cast<size_t>(shape.KvElements()), -2, 2, 12);
  const std::vector<double> v = UniformValues(static_cast<size_t>(shape.KvElements()), -1, 1, 13);
  Expected<AttentionForwardResult> got = ReferenceAttentionForward(shape, q, k, v);
  ASSERT_TRUE(got.ok()) << got.status().message();
  const AttentionForwardResult want = NaiveAttention(shape, q, k, v);
  ExpectAllNear("o", got->o, want.o, 1e-12);
  ExpectAllNear("lse", got->lse, want.lse, 1e-12);
}

// The rows [first, first + rows) of x [batch, seq, heads, head_dim] (one batch, one head).
std::vector<double> Rows(const std::vector<double>& x, int64_t first, int64_t rows, int64_t d) {
  return {x.begin() + first * d, x.begin() + (first + rows) * d};
}

// Ring attention (Liu et al. 2023) on two chunks of a causal sequence: the second chunk's queries
// against their own keys (causal), merged with their attention to the first chunk's keys (all
// visible), are the second half of causal attention over the whole sequence, output and lse.
TEST(ReferenceAttentionTest, MergedRingStepsAreCausalAttentionOverTheWholeSequence) {
  const int64_t chunk = 5, d = 4;
  const AttentionShape whole{1, 2 * chunk, 1, d};
  const size_t n = static_cast<size_t>(whole.Elements());
  const std::vector<double> q = UniformValues(n, -2, 2, 21);
  const std::vector<double> k = UniformValues(n, -2, 2, 22);
  const std::vector<double> v = UniformValues(n, -1, 1, 23);
  Expected<AttentionForwardResult> want = ReferenceAttentionForward(whole, q, k, v);
  ASSERT_TRUE(want.ok()) << want.status().message();

  const AttentionShape own{1, chunk, 1, d};
  const std::vector<double> q1 = Rows(q, chunk, chunk, d);
  Expected<AttentionForwardResult> diagonal =
      ReferenceAttentionForward(own, q1, Rows(k, chunk, chunk, d), Rows(v, chunk, chunk, d));
  AttentionShape earlier = own;
  earlier.causal = false;
  Expected<AttentionForwardResult> step =
      ReferenceAttentionForward(earlier, q1, Rows(k, 0, chunk, d), Rows(v, 0, chunk, d));
  ASSERT_TRUE(diagonal.ok() && step.ok());
  AttentionForwardResult merged = *diagonal;
  ASSERT_TRUE(
      ReferenceAttentionMergeInto<double>(own, step->o, step->lse, merged.o, merged.lse).ok());
  ExpectAllNear("o", merged.o, Rows(want->o, chunk, chunk, d), 1e-12);
  ExpectAllNear("lse", merged.lse, Rows(want->lse, chunk, chunk, 1), 1e-12);
}

TEST(ReferenceAttentionTest, CausalNeedsAsManyKeysAsQueries) {
  AttentionShape shape{1, 4, 1, 4};
  shape.kv_seq = 2;
  EXPECT_EQ(CheckShape(shape).message(),
            "attention shape: a causal shape needs kv_seq = seq (4), got 2");
  shape.kv_seq = -1;
  shape.causal = false;
  EXPECT_EQ(CheckShape(shape).message(),
            "attention shape: kv_seq must be 0 (= seq) or positive, got -1");
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
