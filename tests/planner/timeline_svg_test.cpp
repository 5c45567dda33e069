// The Gantt chart of a Timeline: rows per rank and stream, bar colours and legend, micro-batch
// labels, compute-only mode, and well-formed output for odd input.
#include "planner/timeline_svg.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <string>
#include <string_view>

#include "tests/timeline_op.h"

namespace gpuplan {
namespace {

size_t Count(const std::string& haystack, const std::string& needle) {
  size_t n = 0;
  for (size_t pos = haystack.find(needle); pos != std::string::npos;
       pos = haystack.find(needle, pos + needle.size())) {
    ++n;
  }
  return n;
}

bool HasText(const std::string& svg, const std::string& text) {
  return svg.find(">" + text + "</text>") != std::string::npos;
}

// Two stages over 100 ms. Stage 0: forward mb 7 (wide), a 0.1 ms forward mb 9 (too narrow for a
// label), backward, wgrad, recompute, embedding, optimizer; tp all-reduce and a pp send. Stage
// 1: forward, backward, a pp receive and a dp reduce-scatter.
Timeline TwoStages() {
  Timeline t;
  t.ranks = {{"stage 0 <first> & co", 0, 0, 8}, {"stage 1 (rank 8)", 8, 1, 8}};
  t.ops = {
      Op(0, SimStream::kCompute, "embedding", 0.000, 0.002),
      Op(0, SimStream::kCompute, "forward", 0.002, 0.020, 7),
      Op(0, SimStream::kCompute, "forward", 0.020, 0.0201, 9),
      Op(0, SimStream::kTp, "all-reduce", 0.010, 0.012),
      Op(0, SimStream::kPpSend, "send", 0.0201, 0.022, 7),
      Op(0, SimStream::kCompute, "recompute", 0.050, 0.060, 7),
      Op(0, SimStream::kCompute, "backward", 0.060, 0.080, 7),
      Op(0, SimStream::kCompute, "wgrad", 0.080, 0.090, 7),
      Op(0, SimStream::kCompute, "optimizer", 0.090, 0.100),
      Op(1, SimStream::kPpRecv, "recv", 0.0201, 0.022, 7),
      Op(1, SimStream::kCompute, "forward", 0.022, 0.040, 7),
      Op(1, SimStream::kCompute, "backward", 0.040, 0.050, 7),
      Op(1, SimStream::kDpReduce, "reduce-scatter", 0.050, 0.090),
  };
  t.flows = {{4, 9}};
  return t;
}

void ExpectWellFormed(const std::string& svg) {
  EXPECT_EQ(svg.rfind("<svg", 0), 0u) << svg.substr(0, 80);
  EXPECT_EQ(Count(svg, "<svg"), 1u);
  EXPECT_EQ(Count(svg, "</svg>"), 1u);
  EXPECT_EQ(Count(svg, "<text"), Count(svg, "</text>"));
  EXPECT_EQ(Count(svg, "<title>"), Count(svg, "</title>"));
  std::string lower = svg;
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  EXPECT_EQ(lower.find("nan"), std::string::npos);
  EXPECT_EQ(lower.find("inf"), std::string::npos);
  EXPECT_EQ(svg.find("<script"), std::string::npos);
}

TEST(TimelineSvg, RowsLegendAndLabels) {
  const Timeline t = TwoStages();
  GanttOptions options;
  options.title = "Step of Llama 8B";
  const std::string svg = TimelineSvg(t, options);
  ExpectWellFormed(svg);
  EXPECT_NE(svg.find("xmlns=\"http://www.w3.org/2000/svg\""), std::string::npos);
  EXPECT_TRUE(HasText(svg, "Step of Llama 8B"));
  // One label per rank, escaped.
  EXPECT_EQ(Count(svg, ">stage 0 &lt;first&gt; &amp; co</text>"), 1u);
  EXPECT_EQ(Count(svg, ">stage 1 (rank 8)</text>"), 1u);
  // Stream rows: compute on both ranks, the others where used (row labels; "tp comm" and the
  // others appear once more in the legend).
  EXPECT_EQ(Count(svg, ">compute</text>"), 2u);
  EXPECT_EQ(Count(svg, ">tp comm</text>"), 2u);
  EXPECT_EQ(Count(svg, ">pp send</text>"), 2u);
  EXPECT_EQ(Count(svg, ">pp recv</text>"), 2u);
  EXPECT_EQ(Count(svg, ">dp reduce</text>"), 2u);
  EXPECT_FALSE(HasText(svg, "cp comm"));
  // Legend: every kind drawn.
  for (const char* name :
       {"forward", "backward", "weight gradient", "recompute", "optimizer", "other compute"}) {
    EXPECT_TRUE(HasText(svg, name)) << name;
  }
  // Rects: a band per rank, a bar per op, a swatch per legend entry (6 compute kinds + 4
  // streams).
  EXPECT_EQ(Count(svg, "<rect"), t.ranks.size() + t.ops.size() + 10);
  // Micro-batch labels on the wide forward and backward bars, not on the narrow one.
  EXPECT_NE(svg.find("fill=\"#fff\">7</text>"), std::string::npos);
  EXPECT_EQ(Count(svg, ">7</text>"), 4u);
  EXPECT_FALSE(HasText(svg, "9"));
  // Colours: forward and backward differ, communication by stream.
  EXPECT_NE(svg.find("fill=\"#4e79a7\""), std::string::npos);
  EXPECT_NE(svg.find("fill=\"#f28e2b\""), std::string::npos);
  // Tooltips and the time axis.
  EXPECT_NE(svg.find("<title>forward mb7: 2.000\u201320.000 ms</title>"), std::string::npos);
  EXPECT_TRUE(HasText(svg, "time (ms)"));
  EXPECT_TRUE(HasText(svg, "0"));
  EXPECT_TRUE(HasText(svg, "100"));
}

TEST(TimelineSvg, ComputeOnlyDropsCommunicationRows) {
  const Timeline t = TwoStages();
  GanttOptions options;
  options.compute_only = true;
  const std::string svg = TimelineSvg(t, options);
  ExpectWellFormed(svg);
  for (const char* stream : {"tp comm", "pp send", "pp recv", "dp reduce"}) {
    EXPECT_FALSE(HasText(svg, stream)) << stream;
  }
  EXPECT_EQ(Count(svg, ">compute</text>"), 2u);
  const auto compute_ops =
      static_cast<size_t>(std::count_if(t.ops.begin(), t.ops.end(), [](const TimelineOp& op) {
        return op.stream == SimStream::kCompute;
      }));
  EXPECT_EQ(Count(svg, "<rect"), t.ranks.size() + compute_ops + 6);
  // Shorter than the full chart.
  const std::string full = TimelineSvg(t, GanttOptions{});
  EXPECT_LT(svg.size(), full.size());
}

TEST(TimelineSvg, OneLabelPerRunOfLayerOps) {
  // 20 layers of forward mb 3, each 0.1 ms (under 12 px), then forward mb 4 after a gap, and
  // layers of backward mb 3 interleaved with recompute: each layer too narrow to label alone.
  Timeline t;
  t.ranks = {{"stage 0", 0, 0, 1}};
  for (int l = 0; l < 20; ++l) {
    TimelineOp op = Op(0, SimStream::kCompute, "forward", l * 1e-4, (l + 1) * 1e-4, 3);
    op.layer = l;
    t.ops.push_back(op);
  }
  for (int l = 0; l < 20; ++l) {
    t.ops.push_back(
        Op(0, SimStream::kCompute, "forward", 0.004 + l * 1e-4, 0.004 + (l + 1) * 1e-4, 4));
  }
  for (int l = 0; l < 20; ++l) {
    const double at = 0.008 + l * 2e-4;
    t.ops.push_back(Op(0, SimStream::kCompute, "recompute", at, at + 1e-4, 3));
    t.ops.push_back(Op(0, SimStream::kCompute, "backward", at + 1e-4, at + 2e-4, 3));
  }
  const std::string svg = TimelineSvg(t, GanttOptions{});
  ExpectWellFormed(svg);
  EXPECT_EQ(Count(svg, "<rect"), 1 + t.ops.size() + 3);
  EXPECT_EQ(Count(svg, "fill=\"#fff\">3</text>"), 1u);
  EXPECT_EQ(Count(svg, "fill=\"#fff\">4</text>"), 1u);
}

TEST(TimelineSvg, RanksWithoutOpsKeepTheirComputeRow) {
  Timeline t = TwoStages();
  t.ranks.push_back({"stage 2 (idle)", 16, 2, 8});
  const std::string svg = TimelineSvg(t, GanttOptions{});
  ExpectWellFormed(svg);
  EXPECT_TRUE(HasText(svg, "stage 2 (idle)"));
  EXPECT_EQ(Count(svg, ">compute</text>"), 3u);
}

TEST(TimelineSvg, OddInputStaysWellFormed) {
  ExpectWellFormed(TimelineSvg(Timeline{}, GanttOptions{}));
  Timeline t = TwoStages();
  t.ops.push_back(Op(0, SimStream::kCompute, "forward", std::nan(""), 1.0, 1));
  t.ops.push_back(Op(4, SimStream::kCompute, "forward", 0, 1.0, 1));        // no rank 4
  t.ops.push_back(Op(1, SimStream::kCompute, "forward", 0.095, 0.095, 2));  // zero length
  GanttOptions odd;
  odd.width_px = std::nan("");
  odd.row_height_px = -3;
  const std::string svg = TimelineSvg(t, odd);
  ExpectWellFormed(svg);
  EXPECT_EQ(Count(svg, "<rect"), t.ranks.size() + t.ops.size() - 2 + 10);
  Timeline empty_ops;
  empty_ops.ranks = {{"lonely", 0, 0, 1}};
  const std::string lonely = TimelineSvg(empty_ops, GanttOptions{});
  ExpectWellFormed(lonely);
  EXPECT_EQ(Count(lonely, "<rect"), 1u);
}

}  // namespace
}  // namespace gpuplan
