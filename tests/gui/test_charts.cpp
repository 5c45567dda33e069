// QTest suite of the chart widgets: MemoryBar, BreakdownBar, ScalingChart, ParetoChart.
#include <QApplication>
#include <QHelpEvent>
#include <QImage>
#include <QSignalSpy>
#include <QTest>
#include <QToolTip>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "gui/breakdown_bar.h"
#include "gui/chart_paint.h"
#include "gui/memory_bar.h"
#include "gui/pareto_chart.h"
#include "gui/scaling_chart.h"
#include "planner/chart_series.h"

namespace gpuplan {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// One GPU of a Llama-70B-like layout: 64.3 GB of 80 GB when `activations_gb` is 23.4.
MemoryBreakdown Memory(double activations_gb) {
  MemoryBreakdown m;
  m.weights_bytes = 17.6e9;
  m.grads_bytes = 8.8e9;
  m.optimizer_bytes = 8.8e9;
  m.activations_bytes = activations_gb * 1e9;
  m.logits_bytes = 2.2e9;
  m.overhead_bytes = 3.5e9;
  m.peak_bytes = m.weights_bytes + m.grads_bytes + m.optimizer_bytes + m.activations_bytes +
                 m.logits_bytes + m.overhead_bytes;
  m.capacity_bytes = 80e9;
  m.fits = m.peak_bytes <= m.capacity_bytes;
  return m;
}

TimeBreakdown Breakdown() {
  TimeBreakdown b;
  b.compute = 4.1;
  b.tp_comm = 0.62;
  b.pp_comm = 0.08;
  b.dp_comm = 0.35;
  b.bubble = 0.71;
  b.optimizer = 0.04;
  return b;
}

// A plan on `gpus` GPUs of `gpu` in TP8 x DP layout; `usd_per_gpu_hour` 0 = no price known.
Plan MakePlan(const std::string& gpu, int64_t gpus, double wall_s, double usd_per_gpu_hour) {
  Plan p;
  p.job.cluster.gpu = gpu;
  p.job.cluster.num_gpus = gpus;
  p.job.cluster.gpus_per_node = 8;
  p.job.parallel.tp = 8;
  p.job.parallel.dp = gpus / 8;
  p.job.parallel.zero_stage = 1;
  p.econ.expected_wall_s = wall_s;
  p.econ.usd_per_gpu_hour = usd_per_gpu_hour;
  p.econ.billed_gpus = gpus;
  p.econ.expected_cost_usd =
      wall_s / 3600 * static_cast<double>(gpus) * usd_per_gpu_hour * (1 + 0.02 * std::log2(gpus));
  return p;
}

// The front of a 70B run: more GPUs are faster and a little dearer; index 2 has no price.
std::vector<Plan> Front() {
  return {MakePlan("h100-sxm5-80gb", 512, 3.1 * 86400, 2.49),
          MakePlan("h100-sxm5-80gb", 256, 6.0 * 86400, 2.49),
          MakePlan("mi300x-192gb", 256, 7.5 * 86400, 0),
          MakePlan("a100-sxm4-80gb", 128, 14.0 * 86400, 1.10)};
}

// Scaling rows from 1 to 512 GPUs; 1 to 4 do not fit.
std::vector<ScalingRow> Rows() {
  std::vector<ScalingRow> rows;
  for (int64_t g = 1; g <= 512; g *= 2) {
    ScalingRow r;
    r.gpus = g;
    r.feasible = g >= 8;
    if (r.feasible) {
      const double ratio = static_cast<double>(g) / 8;
      r.scaling_efficiency = 1 - 0.04 * std::log2(ratio);
      r.speedup = ratio * r.scaling_efficiency;
      r.plan = MakePlan("h100-sxm5-80gb", g, 90 * 86400 / r.speedup, 2.49);
    }
    rows.push_back(r);
  }
  return rows;
}

int CountPixels(const QImage& image, QColor color) {
  const QRgb rgb = color.rgb();
  int n = 0;
  for (int y = 0; y < image.height(); ++y) {
    for (int x = 0; x < image.width(); ++x) n += image.pixel(x, y) == rgb ? 1 : 0;
  }
  return n;
}

QImage Grab(QWidget& w) { return w.grab().toImage().convertToFormat(QImage::Format_RGB32); }

// The tooltip `widget` shows when hovered at `pos`; empty when it ignores the event.
QString ToolTipAt(QWidget& widget, const QPoint& pos) {
  QHelpEvent help(QEvent::ToolTip, pos, widget.mapToGlobal(pos));
  QApplication::sendEvent(&widget, &help);
  return help.isAccepted() ? QToolTip::text() : QString();
}

}  // namespace

class ChartsTest : public QObject {
  Q_OBJECT

 private slots:
  void memoryBarOverCapacityIsMarkedRed() {
    MemoryBar bar;
    bar.SetMemory(Memory(56.4));  // 97.3 GB of 80 GB
    bar.resize(480, bar.heightForWidth(480));
    QVERIFY(bar.OverCapacity());
    QVERIFY(CountPixels(Grab(bar), MemoryBar::OverCapacityColor()) > 50);
  }

  void memoryBarThatFitsHasNoRed() {
    MemoryBar bar;
    bar.SetMemory(Memory(23.4));  // 64.3 GB of 80 GB
    bar.resize(480, bar.heightForWidth(480));
    QVERIFY(!bar.OverCapacity());
    QCOMPARE(CountPixels(Grab(bar), MemoryBar::OverCapacityColor()), 0);
    // The memory parts are drawn in the colours of the HTML report.
    QVERIFY(CountPixels(Grab(bar), ChartColor(kMemoryParts[3].color)) > 50);
  }

  void memoryBarNamesThePeakStageOfAPipeline() {
    MemoryBar bar;
    bar.resize(480, 70);
    MemoryBreakdown m = Memory(23.4);  // 64.3 GB of 80 GB
    m.peak_stage = 5;
    bar.SetMemory(m);
    QVERIFY(!bar.StatusText().contains(QStringLiteral("stage")));
    bar.SetMemory(m, 16);
    QVERIFY2(bar.StatusText().endsWith(QStringLiteral(", on pipeline stage 5 of 16")),
             qPrintable(bar.StatusText()));
  }

  void memoryBarNoPartUsesTheOverCapacityColour() {
    for (const MemoryPart& part : kMemoryParts) {
      QVERIFY(ChartColor(part.color) != MemoryBar::OverCapacityColor());
    }
  }

  void memoryBarClearedOrInvalidIsNotOverCapacity() {
    MemoryBar bar;
    bar.resize(480, 70);
    bar.SetMemory(Memory(56.4));
    bar.Clear(QStringLiteral("global batch is not a multiple of DP"));
    QVERIFY(!bar.OverCapacity());
    QCOMPARE(CountPixels(Grab(bar), MemoryBar::OverCapacityColor()), 0);
    MemoryBreakdown nan = Memory(23.4);
    nan.peak_bytes = kNaN;
    bar.SetMemory(nan);
    QVERIFY(!bar.OverCapacity());
    QVERIFY(!Grab(bar).isNull());
  }

  void memoryBarTooltipGivesTheExactPart() {
    MemoryBar bar;
    bar.SetMemory(Memory(23.4));
    bar.resize(480, bar.heightForWidth(480));
    bar.show();
    QVERIFY(QTest::qWaitForWindowExposed(&bar));
    // Activations start after weights, gradients and optimizer (35.2 GB) on a 84 GB scale.
    const double inner = 480 - 2 * kChartPadding;
    const int x = static_cast<int>(kChartPadding + inner * (35.2 + 11.7) / 84.0);
    int y = 0;
    QString tip;
    for (y = 0; y < bar.height() && tip.isEmpty(); ++y) tip = ToolTipAt(bar, QPoint(x, y));
    QCOMPARE(tip, QStringLiteral("activations: 23.4 GB"));
    QCOMPARE(ToolTipAt(bar, QPoint(1, 1)), QString());
  }

  void memoryBarIsShortAndGrowsWhenNarrow() {
    MemoryBar bar;
    bar.SetMemory(Memory(23.4));
    QVERIFY(bar.sizePolicy().hasHeightForWidth());
    QVERIFY(bar.heightForWidth(900) >= 40 && bar.heightForWidth(900) <= 90);
    QVERIFY(bar.heightForWidth(180) > bar.heightForWidth(900));
    QCOMPARE(bar.sizeHint().height(), bar.heightForWidth(bar.sizeHint().width()));
    // Clearing keeps the height, so the layout does not jump while the user types.
    const int before = bar.heightForWidth(400);
    bar.Clear(QStringLiteral("invalid"));
    QCOMPARE(bar.heightForWidth(400), before);
  }

  void breakdownBarDrawsTheParts() {
    BreakdownBar bar;
    bar.SetBreakdown(Breakdown());
    bar.resize(480, bar.heightForWidth(480));
    const QImage image = Grab(bar);
    QVERIFY(CountPixels(image, ChartColor(kTimeParts[0].color)) > 100);  // compute
    QVERIFY(CountPixels(image, ChartColor(kTimeParts[6].color)) > 20);   // bubble
    QCOMPARE(CountPixels(image, ChartColor(kTimeParts[2].color)), 0);    // CP comm: no time
  }

  void breakdownBarSurvivesDegenerateInput() {
    BreakdownBar bar;
    bar.resize(300, 70);
    QVERIFY(!Grab(bar).isNull());  // never set
    bar.SetBreakdown(TimeBreakdown{});
    QCOMPARE(CountPixels(Grab(bar), ChartColor(kTimeParts[0].color)), 0);
    TimeBreakdown odd = Breakdown();
    odd.compute = kNaN;
    odd.dp_comm = std::numeric_limits<double>::infinity();
    odd.bubble = -1;
    bar.SetBreakdown(odd);
    QVERIFY(CountPixels(Grab(bar), ChartColor(kTimeParts[1].color)) > 0);  // TP comm still
    bar.Clear(QStringLiteral("no result"));
    QCOMPARE(CountPixels(Grab(bar), ChartColor(kTimeParts[1].color)), 0);
    bar.resize(20, 10);
    bar.SetBreakdown(Breakdown());
    QVERIFY(!Grab(bar).isNull());
  }

  void scalingChartDrawsTheSeries() {
    ScalingChart chart;
    chart.SetRows(Rows(), 64);
    chart.resize(560, 360);
    QVERIFY(chart.minimumSizeHint().width() >= 300 && chart.minimumSizeHint().height() >= 200);
    const QImage image = Grab(chart);
    QVERIFY(CountPixels(image, ChartColor(kChartPalette[0])) > 50);  // speedup
    QVERIFY(CountPixels(image, ChartColor(kChartPalette[4])) > 50);  // efficiency
    QVERIFY(CountPixels(image, ChartColor(kChartPalette[1])) > 50);  // cost bars
    QVERIFY(CountPixels(image, kChartDoesNotFit) > 5);               // 1, 2, 4 GPUs
  }

  void scalingChartDrawsEachCostsBandAsAWhisker() {
    ScalingChart chart;
    chart.resize(560, 360);
    chart.SetRows(Rows(), 64);
    const int cost_pixels = CountPixels(Grab(chart), ChartColor(kChartPalette[1]));
    std::vector<ScalingRow> rows = Rows();
    for (ScalingRow& r : rows) {
      r.plan.band.runs = 9;
      r.plan.band.low_factor = 0.8;
      r.plan.band.high_factor = 1.0;  // the same cost axis as without bands
    }
    chart.SetRows(rows, 64);
    // The whiskers cross the bars: fewer pixels keep the bars' colour.
    QVERIFY(CountPixels(Grab(chart), ChartColor(kChartPalette[1])) < cost_pixels - 20);
  }

  void scalingChartTooltipNamesTheGpuCount() {
    ScalingChart chart;
    chart.SetRows(Rows(), 64);
    chart.resize(560, 360);
    chart.show();
    QVERIFY(QTest::qWaitForWindowExposed(&chart));
    QString tip;
    for (int x = 0; x < chart.width() && !tip.startsWith(QStringLiteral("64 GPUs")); x += 2) {
      tip = ToolTipAt(chart, QPoint(x, chart.height() / 2));
    }
    QVERIFY2(tip.startsWith(QStringLiteral("64 GPUs (current)")), qPrintable(tip));
    QVERIFY2(tip.contains(QStringLiteral("speedup: ")), qPrintable(tip));
    QVERIFY2(tip.contains(QStringLiteral("scaling efficiency: ")), qPrintable(tip));
    QVERIFY2(tip.contains(QStringLiteral("expected cost: $")), qPrintable(tip));
  }

  void scalingChartSurvivesDegenerateInput() {
    ScalingChart chart;
    chart.resize(400, 260);
    QVERIFY(!Grab(chart).isNull());  // never set
    chart.SetRows({}, 0);
    QVERIFY(!Grab(chart).isNull());
    std::vector<ScalingRow> rows = Rows();
    chart.SetRows({rows[5]}, 32);  // one row
    QVERIFY(CountPixels(Grab(chart), ChartColor(kChartPalette[0])) > 0);
    chart.SetRows({rows[0], rows[1]}, 1);  // nothing fits
    QCOMPARE(CountPixels(Grab(chart), ChartColor(kChartPalette[0])), 0);
    rows[6].speedup = kNaN;
    rows[7].scaling_efficiency = kNaN;
    rows[8].plan.econ.expected_cost_usd = 0;  // no price known
    chart.SetRows(rows, 4096);
    QVERIFY(!Grab(chart).isNull());
    for (ScalingRow& r : rows) r.plan.econ.expected_cost_usd = 0;
    chart.SetRows(rows, 8);
    QCOMPARE(CountPixels(Grab(chart), ChartColor(kChartPalette[1])), 0);  // no cost strip
    chart.Clear(QStringLiteral("invalid model"));
    QCOMPARE(CountPixels(Grab(chart), ChartColor(kChartPalette[0])), 0);
    chart.resize(30, 20);
    chart.SetRows(Rows(), 64);
    QVERIFY(!Grab(chart).isNull());
  }

  void paretoClickOnAPointEmitsItsFrontIndex() {
    ParetoChart chart;
    chart.SetPlans(Front(), 1);
    chart.resize(600, 400);
    chart.show();
    QVERIFY(QTest::qWaitForWindowExposed(&chart));
    QSignalSpy spy(&chart, &ParetoChart::PlanClicked);
    for (int i : {0, 1, 3}) {
      QVERIFY(chart.HasPoint(i));
      const QPointF at = chart.PointPosition(i);
      QVERIFY(chart.rect().contains(at.toPoint()));
      QCOMPARE(chart.PointAt(at), i);
      QTest::mouseClick(&chart, Qt::LeftButton, Qt::NoModifier, at.toPoint());
      QCOMPARE(spy.count(), 1);
      QCOMPARE(spy.takeFirst().at(0).toInt(), i);
    }
    QTest::mouseClick(&chart, Qt::LeftButton, Qt::NoModifier, QPoint(3, 3));
    QTest::mouseClick(&chart, Qt::RightButton, Qt::NoModifier, chart.PointPosition(0).toPoint());
    QCOMPARE(spy.count(), 0);
    QCOMPARE(chart.PointAt(QPointF(3, 3)), -1);
    QCOMPARE(chart.PointAt(chart.PointPosition(3) + QPointF(5, 5)), 3);
    QCOMPARE(chart.PointAt(chart.PointPosition(3) + QPointF(9, 0)), -1);
  }

  void paretoSkipsPlansWithoutAPrice() {
    ParetoChart chart;
    chart.SetPlans(Front(), 1);
    chart.resize(600, 400);
    QCOMPARE(chart.PointCount(), 3);
    QVERIFY(!chart.HasPoint(2));
    QVERIFY(!chart.HasPoint(-1));
    QVERIFY(!chart.HasPoint(4));
    QCOMPARE(chart.PointPosition(2), QPointF(-1, -1));
    // Longer wall time is further right, higher cost higher up.
    QVERIFY(chart.PointPosition(0).x() < chart.PointPosition(1).x());
    QVERIFY(chart.PointPosition(1).x() < chart.PointPosition(3).x());
    QVERIFY(chart.PointPosition(0).y() < chart.PointPosition(3).y());
    std::vector<Plan> unpriced = Front();
    for (Plan& p : unpriced) p.econ.usd_per_gpu_hour = 0;
    chart.SetPlans(unpriced, 0);
    QCOMPARE(chart.PointCount(), 0);
    QVERIFY(!Grab(chart).isNull());
  }

  void paretoPositionsFollowTheSize() {
    ParetoChart chart;
    chart.SetPlans(Front(), -1);
    chart.resize(600, 400);
    const QPointF small = chart.PointPosition(3);
    chart.resize(1200, 800);
    const QPointF large = chart.PointPosition(3);
    QVERIFY(large.x() > small.x() + 100);
    QVERIFY(QRectF(chart.rect()).contains(large));
  }

  void paretoHoverShowsThePlanAndAHandCursor() {
    ParetoChart chart;
    chart.SetPlans(Front(), 1);
    chart.resize(600, 400);
    chart.show();
    QVERIFY(QTest::qWaitForWindowExposed(&chart));
    const QPoint at = chart.PointPosition(1).toPoint();
    const QString tip = ToolTipAt(chart, at);
    QVERIFY2(tip.startsWith(QString::fromUtf8("h100-sxm5-80gb \u00d7256, TP8 PP1 DP32")),
             qPrintable(tip));
    QVERIFY2(tip.contains(QStringLiteral("6.0 d")), qPrintable(tip));
    QVERIFY2(tip.contains(QStringLiteral("recommended")), qPrintable(tip));
    QCOMPARE(ToolTipAt(chart, QPoint(3, 3)), QString());
    QTest::mouseMove(&chart, at);
    QTRY_COMPARE(chart.cursor().shape(), Qt::PointingHandCursor);
    QTest::mouseMove(&chart, QPoint(3, 3));
    QTRY_COMPARE(chart.cursor().shape(), Qt::ArrowCursor);
  }

  void paretoCurrentPlanIsADiamond() {
    ParetoChart chart;
    chart.SetPlans(Front(), 1);
    chart.resize(600, 400);
    const QColor current = ChartColor(kChartPalette[6]);
    QCOMPARE(CountPixels(Grab(chart), current), 0);
    chart.SetCurrent(12 * 86400, 250000);
    QVERIFY(CountPixels(Grab(chart), current) > 20);
    QCOMPARE(chart.PointCount(), 3);  // not a point of the front
    chart.SetCurrent(kNaN, 1);
    QCOMPARE(CountPixels(Grab(chart), current), 0);
    chart.SetCurrent(12 * 86400, 250000);
    chart.ClearCurrent();
    QCOMPARE(CountPixels(Grab(chart), current), 0);
  }

  void paretoCurrentPlanShowsItsBandAsAWhisker() {
    ParetoChart chart;
    chart.SetPlans(Front(), 1);
    chart.resize(600, 400);
    const QColor current = ChartColor(kChartPalette[6]);
    chart.SetCurrent(12 * 86400, 250000);
    const int diamond = CountPixels(Grab(chart), current);
    chart.SetCurrent(12 * 86400, 250000, 0.8, 1.3);
    QVERIFY2(CountPixels(Grab(chart), current) > diamond + 20, "no whisker drawn");
    chart.SetCurrent(12 * 86400, 250000, 1.3, 0.8);  // not a band: the diamond alone
    QCOMPARE(CountPixels(Grab(chart), current), diamond);
  }

  void paretoClearRemovesThePoints() {
    ParetoChart chart;
    chart.SetPlans(Front(), 1);
    chart.resize(400, 260);
    chart.Clear(QStringLiteral("invalid model"));
    QCOMPARE(chart.PointCount(), 0);
    QVERIFY(!chart.HasPoint(0));
    QCOMPARE(chart.PointAt(QPointF(200, 130)), -1);
    QCOMPARE(CountPixels(Grab(chart), ChartColor(kChartPalette[0])), 0);
    chart.SetPlans({Front()[0]}, 0);  // one point
    chart.resize(30, 20);
    QVERIFY(!Grab(chart).isNull());
  }
};

}  // namespace gpuplan

QTEST_MAIN(gpuplan::ChartsTest)
#include "test_charts.moc"
