// Human units of the reports (planner/units_format.h), count nouns (common/str_format.h) and
// the SVG helpers (planner/svg_chart.h).
#include "planner/units_format.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "common/str_format.h"
#include "planner/svg_chart.h"

namespace gpuplan {
namespace {

TEST(ReportUnits, DurationPicksTheReadableUnit) {
  EXPECT_EQ(FormatDuration(0), "0 us");
  EXPECT_EQ(FormatDuration(250e-6), "250 us");
  EXPECT_EQ(FormatDuration(0.85), "850.0 ms");
  EXPECT_EQ(FormatDuration(1.234), "1.23 s");
  EXPECT_EQ(FormatDuration(42), "42.00 s");
  EXPECT_EQ(FormatDuration(750), "12.5 min");
  EXPECT_EQ(FormatDuration(8 * 3600), "8.0 h");
  EXPECT_EQ(FormatDuration(2.1 * 3600), "2.1 h");
  EXPECT_EQ(FormatDuration(36 * 3600), "36.0 h");
  EXPECT_EQ(FormatDuration(14.3 * 86400), "14.3 d");
  EXPECT_EQ(FormatDuration(-1), "n/a");
  EXPECT_EQ(FormatDuration(std::numeric_limits<double>::infinity()), "n/a");
  EXPECT_EQ(FormatDuration(std::nan("")), "n/a");
}

TEST(ReportUnits, MoneyGroupsThousandsAndKeepsCentsForSmallAmounts) {
  EXPECT_EQ(FormatUsd(1234567.4), "$1,234,567");
  EXPECT_EQ(FormatUsd(1000), "$1,000");
  EXPECT_EQ(FormatUsd(999.6), "$1,000");
  EXPECT_EQ(FormatUsd(100), "$100");
  EXPECT_EQ(FormatUsd(2.49), "$2.49");
  EXPECT_EQ(FormatUsd(0.534), "$0.53");
  EXPECT_EQ(FormatUsd(0), "$0.00");
  EXPECT_EQ(FormatUsd(-12), "-$12.00");
  EXPECT_EQ(FormatUsd(-25000), "-$25,000");
  EXPECT_EQ(FormatUsd(std::numeric_limits<double>::infinity()), "n/a");
}

TEST(ReportUnits, CountsPercentsAndBytes) {
  EXPECT_EQ(FormatCount(1234567.8), "1,234,568");
  EXPECT_EQ(FormatCount(999), "999");
  EXPECT_EQ(FormatCount(-4321), "-4,321");
  EXPECT_EQ(FormatSiCount(2.0e12), "2.00T");
  EXPECT_EQ(FormatSiCount(5.3e9), "5.30B");
  EXPECT_EQ(FormatSiCount(12345), "12.3k");
  EXPECT_EQ(FormatSiCount(999999), "1.00M");
  EXPECT_EQ(FormatSiCount(123), "123");
  // Token counts: the CLI's "2.00T tokens" and the GUI's token field use this one format.
  EXPECT_EQ(FormatSiCount(1e12), "1.00T");
  EXPECT_EQ(FormatSiCount(15.6e12), "15.6T");
  EXPECT_EQ(FormatSiCount(15e9), "15.0B");
  EXPECT_EQ(FormatSiCount(500e9), "500B");
  EXPECT_EQ(FormatGb(80e9), "80.0 GB");
  EXPECT_EQ(FormatPercent(0.4567), "45.7%");
  EXPECT_EQ(FormatFixed(3.846, 2), "3.85");
}

TEST(ReportUnits, NounAgreesWithTheCount) {
  EXPECT_EQ(Noun(1, "micro-batch", "micro-batches"), "micro-batch");
  EXPECT_EQ(Noun(2, "micro-batch", "micro-batches"), "micro-batches");
  EXPECT_EQ(Noun(0, "GPU", "GPUs"), "GPUs");
  EXPECT_EQ(Noun(int64_t{1}, "GPU", "GPUs"), "GPU");
  EXPECT_EQ(Noun(1.0, "step", "steps"), "step");
  EXPECT_EQ(Noun(1.5, "step", "steps"), "steps");
  EXPECT_EQ(Noun(-1, "node", "nodes"), "nodes");
}

TEST(ReportSvg, EscapesMarkup) {
  EXPECT_EQ(HtmlEscape("a<b>&\"c'"), "a&lt;b&gt;&amp;&quot;c&#39;");
  EXPECT_EQ(HtmlEscape("plain"), "plain");
}

TEST(ReportSvg, ScalesMapLinearlyAndLogarithmically) {
  const Scale lin{0, 10, 100, 200, false};
  EXPECT_DOUBLE_EQ(lin(5), 150);
  const Scale log{1, 100, 300, 100, true};  // an upward y axis
  EXPECT_DOUBLE_EQ(log(1), 300);
  EXPECT_DOUBLE_EQ(log(10), 200);
  EXPECT_DOUBLE_EQ(log(100), 100);
}

TEST(ReportSvg, TicksAreRound) {
  const std::vector<double> unit = LinearTicks(0, 1, 5);
  ASSERT_EQ(unit.size(), 6u);
  for (size_t i = 0; i < unit.size(); ++i)
    EXPECT_NEAR(unit[i], 0.2 * static_cast<double>(i), 1e-12);
  EXPECT_EQ(LinearTicks(0, 10000, 5), (std::vector<double>{0, 2000, 4000, 6000, 8000, 10000}));
  EXPECT_DOUBLE_EQ(NiceCeiling(87e9), 100e9);  // steps of 20e9
  EXPECT_DOUBLE_EQ(NiceCeiling(45e9), 50e9);   // steps of 10e9
  EXPECT_DOUBLE_EQ(NiceCeiling(1.3), 1.5);
  EXPECT_EQ(PowerTicks(5, 70, 2), (std::vector<double>{8, 16, 32, 64}));
  EXPECT_EQ(DurationTicks(3000, 4000), (std::vector<double>{3600}));
  const std::vector<double> wide = DurationTicks(1, 10 * 365 * 86400.0);
  EXPECT_LE(wide.size(), 8u);
  EXPECT_EQ(wide.front(), 1);
}

}  // namespace
}  // namespace gpuplan
