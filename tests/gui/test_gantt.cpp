// QTest suite of GanttView: the row rule, hit testing and tooltips, wheel zoom, dragging, keys,
// double-click, clamping of the visible range, the empty state, and the simulated step of
// Llama 3 405B on 2048 H100 (rendered, with the time SetTimeline and a repaint take).
#include <QApplication>
#include <QElapsedTimer>
#include <QHelpEvent>
#include <QImage>
#include <QScrollArea>
#include <QScrollBar>
#include <QSignalSpy>
#include <QTest>
#include <QToolTip>
#include <QWheelEvent>
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "gui/gantt_view.h"
#include "planner/timeline_style.h"
#include "simulator/event_sim.h"
#include "simulator/job_spec_json.h"
#include "tests/builtin_db.h"
#include "tests/timeline_op.h"

namespace gpuplan {
namespace {

// Two stages over 100 ms. Stage 0: forward and backward on compute (a gap from 20 to 60 ms),
// a TP all-reduce and a pipeline send. Stage 1: the matching receive, forward, backward and
// the optimizer.
Timeline TwoStages() {
  Timeline t;
  t.ranks = {{"stage 0 (rank 0)", 0, 0, 8}, {"stage 1 (rank 8)", 8, 1, 8}};
  t.ops = {
      Op(0, SimStream::kCompute, "forward", 0.000, 0.020, 0),
      Op(0, SimStream::kTp, "all-reduce", 0.020, 0.025, 0),
      Op(0, SimStream::kPpSend, "send", 0.025, 0.030, 0),
      Op(0, SimStream::kCompute, "backward", 0.060, 0.080, 0),
      Op(1, SimStream::kPpRecv, "recv", 0.025, 0.030, 0),
      Op(1, SimStream::kCompute, "forward", 0.030, 0.050, 0),
      Op(1, SimStream::kCompute, "backward", 0.050, 0.060, 0),
      Op(1, SimStream::kCompute, "optimizer", 0.090, 0.100),
  };
  t.ops[1].bytes = 2.5e8;
  t.ops[1].layer = 3;
  t.flows = {{2, 4}};
  return t;
}

// The centre of the bar of op `index` of TwoStages() on `row`.
QPointF Centre(const GanttView& view, const Timeline& t, size_t index, int row) {
  const TimelineOp& op = t.ops[index];
  return QPointF(view.XAt((op.start_s + op.end_s) / 2), view.RowRect(row).center().y());
}

void SendWheel(GanttView& view, const QPointF& pos, QPoint angle_delta) {
  QWheelEvent wheel(pos, view.mapToGlobal(pos), QPoint(), angle_delta, Qt::NoButton, Qt::NoModifier,
                    Qt::NoScrollPhase, false);
  QApplication::sendEvent(&view, &wheel);
}

bool Near(double a, double b) { return std::abs(a - b) <= 1e-9 * std::max(1.0, std::abs(b)); }

int CountColor(const QImage& image, const QRect& area, QRgb color) {
  int n = 0;
  for (int y = area.top(); y <= area.bottom(); ++y) {
    for (int x = area.left(); x <= area.right(); ++x) n += image.pixel(x, y) == color ? 1 : 0;
  }
  return n;
}

QRgb KindRgb(OpKind kind) { return ChartColor(OpKindColor(kind)).rgb(); }

// Llama 3 405B on 2048 H100: TP8 PP16 DP16, 64 micro-batches of 8192 tokens, selective
// recomputation, ZeRO-1 (`gpuplan simulate --model llama3-405b --gpus 2048 --tp 8 --pp 16 ...`).
EventSimResult Simulate405B() {
  const nlohmann::json spec = {
      {"model", "llama3-405b"},
      {"cluster", {{"gpu", "h100-sxm5-80gb"}, {"num_gpus", 2048}}},
      {"training", {{"seq_len", 8192}, {"global_batch_size", 1024}, {"recompute", "selective"}}},
      {"parallelism",
       {{"tp", 8},
        {"pp", 16},
        {"zero_stage", 1},
        {"account_for_embedding_in_pipeline_split", true},
        {"account_for_loss_in_pipeline_split", true}}}};
  Expected<JobSpec> job = ParseJobSpec(spec, "<test>", ".", BuiltinDb());
  if (!job.ok()) qFatal("%s", job.status().message().c_str());
  Expected<EventSimResult> sim =
      SimulateStepEvents(*job, *BuiltinDb().FindGpu(job->cluster.gpu),
                         *BuiltinDb().FindNetwork(job->cluster.inter_node));
  if (!sim.ok()) qFatal("%s", sim.status().message().c_str());
  return std::move(sim).value();
}

}  // namespace

class GanttTest : public QObject {
  Q_OBJECT

 private slots:
  void RowsFollowTheSvgRule() {
    GanttView view;
    const Timeline t = TwoStages();
    view.SetTimeline(t);
    // Stage 0: compute, tp comm, pp send; stage 1: compute, pp recv.
    QCOMPARE(view.RowCount(), 5);
    int expected = 0;
    for (uint32_t streams : RowStreams(t, false)) expected += std::popcount(streams);
    QCOMPARE(view.RowCount(), expected);
    const std::vector<std::pair<int32_t, SimStream>> rows = {
        {0, SimStream::kCompute}, {0, SimStream::kTp},     {0, SimStream::kPpSend},
        {1, SimStream::kCompute}, {1, SimStream::kPpRecv},
    };
    for (int r = 0; r < view.RowCount(); ++r) {
      QCOMPARE(view.RowRank(r), rows[static_cast<size_t>(r)].first);
      QVERIFY(view.RowStream(r) == rows[static_cast<size_t>(r)].second);
      if (r > 0) QVERIFY(view.RowRect(r).top() >= view.RowRect(r - 1).bottom());
    }
    // A rank without ops keeps its compute row; one without ranks has no rows.
    Timeline idle = t;
    idle.ranks.push_back({"stage 2 (rank 16)", 16, 2, 8});
    view.SetTimeline(idle);
    QCOMPARE(view.RowCount(), 6);
    view.SetTimeline(Timeline{});
    QCOMPARE(view.RowCount(), 0);
    // The view asks for the height of all rows.
    view.SetTimeline(t);
    QVERIFY(view.minimumSizeHint().height() > view.RowRect(4).bottom());
    QCOMPARE(view.sizeHint().height(), view.minimumSizeHint().height());
    QVERIFY(view.RowHeight() >= 16);
  }

  void OpAtHitsTheBarUnderThePixel() {
    GanttView view;
    view.resize(1000, 400);
    const Timeline t = TwoStages();
    view.SetTimeline(t);
    QVERIFY(Near(view.VisibleStart(), 0) && Near(view.VisibleEnd(), 0.1));

    const std::vector<std::pair<size_t, int>> bars = {{0, 0}, {1, 1}, {2, 2}, {3, 0},
                                                      {4, 4}, {5, 3}, {7, 3}};
    for (const auto& [index, row] : bars) {
      const TimelineOp* op = view.OpAt(Centre(view, t, index, row));
      QVERIFY(op != nullptr);
      QCOMPARE(op->name, t.ops[index].name);
      QCOMPARE(op->rank, t.ops[index].rank);
      QCOMPARE(op->start_s, t.ops[index].start_s);
    }
    // The gap on stage 0's compute row, the gutter, and the gap between two bands.
    const double compute_y = view.RowRect(0).center().y();
    QVERIFY(view.OpAt(QPointF(view.XAt(0.040), compute_y)) == nullptr);
    // Within a pixel of a bar's end still hits it (bars narrower than a pixel can be hovered).
    QVERIFY(view.OpAt(QPointF(view.XAt(0.080) + 0.5, compute_y)) ==
            view.OpAt(Centre(view, t, 3, 0)));
    QVERIFY(view.OpAt(QPointF(view.XAt(0.080) + 3, compute_y)) == nullptr);
    QVERIFY(view.OpAt(QPointF(view.RowRect(0).left() - 5, compute_y)) == nullptr);
    QVERIFY(view.OpAt(QPointF(view.XAt(0.040), view.RowRect(3).top() - 1)) == nullptr);
    QVERIFY(view.OpAt(QPointF(view.XAt(0.040), view.RowRect(4).bottom() + 20)) == nullptr);

    // The tooltip names the op, its rank and stream, its times and bytes.
    const QPointF at = Centre(view, t, 1, 1);
    QHelpEvent help(QEvent::ToolTip, at.toPoint(), view.mapToGlobal(at.toPoint()));
    QApplication::sendEvent(&view, &help);
    const QString tip = QToolTip::text();
    for (const char* part : {"all-reduce", "stage 0 (rank 0)", "tp comm", "micro-batch: 0",
                             "layer: 3", "start: 20.000 ms", "duration: 5.000 ms", "0.25 GB"}) {
      QVERIFY2(tip.contains(QString::fromUtf8(part)), qPrintable(tip));
    }
    // Over the gutter: the rank's tooltip.
    const QPoint gutter(5, view.RowRect(3).center().y());
    QHelpEvent rank_help(QEvent::ToolTip, gutter, view.mapToGlobal(gutter));
    QApplication::sendEvent(&view, &rank_help);
    QVERIFY2(QToolTip::text().contains(QStringLiteral("stage 1 (rank 8)")) &&
                 QToolTip::text().contains(QStringLiteral("8 GPUs")),
             qPrintable(QToolTip::text()));
    QToolTip::hideText();
  }

  void WheelZoomsAroundTheCursorAndDoubleClickResets() {
    GanttView view;
    view.resize(1000, 400);
    view.SetTimeline(TwoStages());
    QSignalSpy changed(&view, &GanttView::VisibleRangeChanged);

    const QPointF cursor(view.XAt(0.075), view.RowRect(0).center().y());
    const double t = view.TimeAt(cursor.x());
    SendWheel(view, cursor, QPoint(0, 120));
    const double span = view.VisibleEnd() - view.VisibleStart();
    QVERIFY(span < 0.1 * 0.85);
    QVERIFY(view.VisibleStart() > 0 && view.VisibleEnd() <= 0.1);
    QVERIFY(Near(view.TimeAt(cursor.x()), t));
    QCOMPARE(changed.count(), 1);
    SendWheel(view, cursor, QPoint(0, 240));
    QVERIFY(view.VisibleEnd() - view.VisibleStart() < span);
    QVERIFY(Near(view.TimeAt(cursor.x()), t));

    const double before = view.VisibleStart();
    // A horizontal wheel pans.
    SendWheel(view, cursor, QPoint(-120, 0));
    QVERIFY(view.VisibleStart() > before);

    QTest::mouseDClick(&view, Qt::LeftButton, Qt::NoModifier, cursor.toPoint());
    QCOMPARE(view.VisibleStart(), 0.0);
    QCOMPARE(view.VisibleEnd(), 0.1);

    // Zooming out never goes beyond the whole step.
    SendWheel(view, cursor, QPoint(0, -600));
    QCOMPARE(view.VisibleStart(), 0.0);
    QCOMPARE(view.VisibleEnd(), 0.1);
  }

  void DragAndKeysPan() {
    GanttView view;
    view.resize(1000, 400);
    view.SetTimeline(TwoStages());
    view.SetVisibleRange(0.02, 0.04);
    const double seconds_per_px = 0.02 / (view.XAt(0.04) - view.XAt(0.02));

    const int y = view.RowRect(0).center().y();
    const int x = static_cast<int>(view.XAt(0.03));
    QTest::mousePress(&view, Qt::LeftButton, Qt::NoModifier, QPoint(x, y));
    QTest::mouseMove(&view, QPoint(x - 100, y));
    QTest::mouseRelease(&view, Qt::LeftButton, Qt::NoModifier, QPoint(x - 100, y));
    QVERIFY(Near(view.VisibleStart(), 0.02 + 100 * seconds_per_px));
    QVERIFY(Near(view.VisibleEnd() - view.VisibleStart(), 0.02));

    QTest::keyClick(&view, Qt::Key_Home);
    QCOMPARE(view.VisibleEnd() - view.VisibleStart(), 0.1);
    QTest::keyClick(&view, Qt::Key_Plus);
    QVERIFY(Near(view.VisibleEnd() - view.VisibleStart(), 0.08));
    QTest::keyClick(&view, Qt::Key_Right);  // a tenth of the plot: 8 ms
    QVERIFY(Near(view.VisibleStart(), 0.018));
    QTest::keyClick(&view, Qt::Key_Left);
    QVERIFY(view.VisibleEnd() < 0.1);
    QTest::keyClick(&view, Qt::Key_Minus);
    QCOMPARE(view.VisibleEnd() - view.VisibleStart(), 0.1);
  }

  void SetVisibleRangeClamps() {
    GanttView view;
    view.resize(1000, 400);
    view.SetVisibleRange(1, 2);  // no timeline: nothing happens
    QCOMPARE(view.VisibleStart(), 0.0);
    QCOMPARE(view.VisibleEnd(), 0.0);

    view.SetTimeline(TwoStages());
    view.SetVisibleRange(-0.01, 0.02);  // moved inside, span kept
    QCOMPARE(view.VisibleStart(), 0.0);
    QVERIFY(Near(view.VisibleEnd(), 0.03));
    view.SetVisibleRange(0.095, 0.105);
    QVERIFY(Near(view.VisibleStart(), 0.09));
    QCOMPARE(view.VisibleEnd(), 0.1);
    view.SetVisibleRange(-1, 5);  // wider than the step: the whole step
    QCOMPARE(view.VisibleStart(), 0.0);
    QCOMPARE(view.VisibleEnd(), 0.1);
    view.SetVisibleRange(0.05, 0.05 + 1e-12);  // narrower than a microsecond: widened
    QVERIFY(Near(view.VisibleEnd() - view.VisibleStart(), 1e-6));
    QVERIFY(Near((view.VisibleStart() + view.VisibleEnd()) / 2, 0.05));
    // Ignored: empty, reversed and non-finite windows.
    const double lo = view.VisibleStart(), hi = view.VisibleEnd();
    view.SetVisibleRange(0.03, 0.03);
    view.SetVisibleRange(0.04, 0.03);
    view.SetVisibleRange(std::numeric_limits<double>::quiet_NaN(), 0.03);
    view.SetVisibleRange(0.01, std::numeric_limits<double>::infinity());
    QCOMPARE(view.VisibleStart(), lo);
    QCOMPARE(view.VisibleEnd(), hi);
    view.ResetZoom();
    QCOMPARE(view.VisibleEnd(), 0.1);
  }

  void ClearShowsTheReason() {
    GanttView view;
    view.resize(600, 200);
    view.SetTimeline(TwoStages());
    view.Clear(QStringLiteral("simulating…"));
    QCOMPARE(view.RowCount(), 0);
    QCOMPARE(view.VisibleStart(), 0.0);
    QCOMPARE(view.VisibleEnd(), 0.0);
    QVERIFY(view.OpAt(QPointF(300, 100)) == nullptr);
    const QImage image = view.grab().toImage();
    QVERIFY(!image.isNull());
    // Grey text on white, nothing else.
    int grey = 0;
    for (int y = 0; y < image.height(); ++y) {
      for (int x = 0; x < image.width(); ++x) {
        const QColor c = image.pixelColor(x, y);
        QCOMPARE(c.red(), c.blue());
        grey += c.red() < 200 ? 1 : 0;
      }
    }
    QVERIFY(grey > 0);
    SendWheel(view, QPointF(300, 100), QPoint(0, 120));
    QCOMPARE(view.VisibleEnd(), 0.0);
    view.Clear();
    QVERIFY(!view.grab().isNull());
  }

  void ScrollsInAScrollArea() {
    QScrollArea scroll;
    auto* view = new GanttView;
    scroll.setWidget(view);
    scroll.setWidgetResizable(true);
    Timeline t = TwoStages();
    for (int32_t r = 2; r < 12; ++r) {
      t.ranks.push_back({"stage " + std::to_string(r), r * 8, r, 8});
      t.ops.push_back(Op(r, SimStream::kCompute, "forward", 0.01 * r, 0.01 * r + 0.005, 0));
    }
    view->SetTimeline(std::move(t));
    scroll.resize(900, 150);
    QVERIFY(!scroll.grab().isNull());
    // All rows are there to scroll through; the plot takes the width.
    QCOMPARE(view->height(), view->minimumSizeHint().height());
    QVERIFY(view->height() > 150);
    QVERIFY(view->width() <= scroll.viewport()->width());
    QVERIFY(scroll.verticalScrollBar()->maximum() > 0);
    // Shift+wheel is ignored, so that the platform's wheel event goes on to the scroll area
    // (QApplication does not pass on a synthesized one, so the test stops at the ignore).
    const double span = view->VisibleEnd() - view->VisibleStart();
    const QPointF at(view->XAt(0.05), 40);
    QWheelEvent wheel(at, view->mapToGlobal(at), QPoint(), QPoint(0, -120), Qt::NoButton,
                      Qt::ShiftModifier, Qt::NoScrollPhase, false);
    QApplication::sendEvent(view, &wheel);
    QVERIFY(!wheel.isAccepted());
    QCOMPARE(view->VisibleEnd() - view->VisibleStart(), span);
  }

  void Llama405BRendersFast() {
    EventSimResult sim = Simulate405B();
    const Timeline copy = sim.timeline;
    QVERIFY(copy.ops.size() > 20000);

    GanttView view;
    view.resize(1400, 700);
    QElapsedTimer timer;
    timer.start();
    view.SetTimeline(std::move(sim.timeline));
    const double set_ms = static_cast<double>(timer.nsecsElapsed()) / 1e6;
    // 16 stages: compute, tp comm, pp send, pp recv, dp reduce, dp gather (the weights of ZeRO-1)
    QCOMPARE(view.RowCount(), 96);

    QImage image = view.grab().toImage();  // warms the font caches
    constexpr int kRepaints = 20;
    timer.restart();
    for (int i = 0; i < kRepaints; ++i) image = view.grab().toImage();
    const double full_ms = static_cast<double>(timer.nsecsElapsed()) / 1e6 / kRepaints;
    qInfo("405B, %zu ops: SetTimeline %.2f ms, repaint of the whole step at 1400x700 %.2f ms",
          copy.ops.size(), set_ms, full_ms);

    const QRect plot(view.RowRect(0).left(), view.RowRect(0).top(), view.RowRect(0).width(),
                     700 - view.RowRect(0).top());
    QVERIFY(CountColor(image, plot, KindRgb(OpKind::kForward)) > 5000);
    QVERIFY(CountColor(image, plot, KindRgb(OpKind::kBackward)) > 5000);
    QVERIFY(CountColor(image, plot, KindRgb(OpKind::kTpComm)) > 5000);
    QVERIFY(CountColor(image, plot, KindRgb(OpKind::kPpSend)) > 0);

    // Zoomed on stage 0's forward of micro-batch 0 (its run of layer ops takes half the plot):
    // the number is drawn in white on the bar.
    double run_lo = std::numeric_limits<double>::infinity(), run_hi = 0;
    for (const TimelineOp& op : copy.ops) {
      if (op.rank == 0 && op.microbatch == 0 && ClassifyOp(op) == OpKind::kForward) {
        run_lo = std::min(run_lo, op.start_s);
        run_hi = std::max(run_hi, op.end_s);
      }
    }
    QVERIFY(run_hi > run_lo);
    const double run = run_hi - run_lo;
    view.SetVisibleRange(run_lo - run / 2, run_hi + run / 2);
    timer.restart();
    image = view.grab().toImage();
    const double zoomed_ms = static_cast<double>(timer.nsecsElapsed()) / 1e6;
    qInfo("405B zoomed on one micro-batch: repaint %.2f ms", zoomed_ms);
    const QRect bar = view.RowRect(0).adjusted(0, 2, 0, -2);
    QVERIFY(CountColor(image, bar, KindRgb(OpKind::kForward)) > 100);
    QVERIFY(CountColor(image, bar, qRgb(255, 255, 255)) > 0);
    const TimelineOp* op = view.OpAt(bar.center());
    QVERIFY(op != nullptr);
    QCOMPARE(op->microbatch, 0);
  }
};

}  // namespace gpuplan

QTEST_MAIN(gpuplan::GanttTest)
#include "test_gantt.moc"
