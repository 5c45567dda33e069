#include "gui/gantt_view.h"

#include <QFont>
#include <QFontMetricsF>
#include <QHelpEvent>
#include <QKeyEvent>
#include <QMouseEvent>
#include <QPaintEvent>
#include <QPainter>
#include <QStringList>
#include <QWheelEvent>
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <string_view>
#include <utility>

#include "common/str_format.h"
#include "planner/svg_chart.h"

namespace gpuplan {
namespace {

constexpr int kBandGap = 3;       // pixels between the bands of two ranks
constexpr int kBarInset = 2;      // pixels between a bar and the edges of its row
constexpr int kRightMargin = 16;  // pixels right of the plot (room for the last tick label)
constexpr int kGanttTickLength = 4;
constexpr int kMinPlot = 200;          // minimumSizeHint: plot pixels beside the gutter
constexpr int kPreferredPlot = 900;    // sizeHint: plot pixels beside the gutter
constexpr int kEmptyHeight = 120;      // sizeHint height without a timeline
constexpr double kMinSpanS = 1e-6;     // narrowest visible window, seconds
constexpr double kZoomPerNotch = 0.8;  // span factor of one wheel notch forwards (or a + key)
constexpr double kPanPerNotch = 0.1;   // plot widths panned by one horizontal notch (or a key)
constexpr double kWheelNotch = 120;    // QWheelEvent::angleDelta of one notch
constexpr double kTickSpacing = 110;   // about this many pixels between time ticks
constexpr double kMinLabelRun = 12;    // narrowest run that carries a micro-batch number
constexpr std::array<QColor, 2> kBandColors = {QColor(0xf2, 0xf2, 0xf2), QColor(0xfa, 0xfa, 0xfa)};
constexpr QColor kGridColor(0xdd, 0xdd, 0xdd);
constexpr double kInfinity = std::numeric_limits<double>::infinity();

const std::array<QColor, kOpKindCount>& KindColors() {
  static const std::array<QColor, kOpKindCount> colors = [] {
    std::array<QColor, kOpKindCount> c;
    for (int k = 0; k < kOpKindCount; ++k) {
      c[static_cast<size_t>(k)] = ChartColor(OpKindColor(static_cast<OpKind>(k)));
    }
    return c;
  }();
  return colors;
}

QString FromView(std::string_view text) {
  return QString::fromUtf8(text.data(), static_cast<qsizetype>(text.size()));
}

QString StreamLabel(SimStream stream) { return FromView(StreamName(stream)); }

// A positive size in decimal units: three significant digits, no exponent from 100 on.
QString Significant(double v) {
  return v >= 100 ? QString::number(v, 'f', 0) : QString::number(v, 'g', 3);
}

}  // namespace

GanttView::GanttView(QWidget* parent) : QWidget(parent) {
  setAttribute(Qt::WA_OpaquePaintEvent);
  setFocusPolicy(Qt::StrongFocus);
  setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Minimum);
  Relayout();
}

void GanttView::SetTimeline(Timeline timeline) {
  timeline_ = std::move(timeline);
  has_timeline_ = true;
  reason_.clear();
  const size_t nranks = timeline_.ranks.size();

  // One row per (rank, stream) the rank shows, in rank then SimStream order.
  const std::vector<uint32_t> shown = RowStreams(timeline_, false);
  std::vector<std::array<int, kSimStreamCount>> row_of(nranks);
  rows_.clear();
  for (size_t r = 0; r < nranks; ++r) {
    for (int s = 0; s < kSimStreamCount; ++s) {
      if (shown[r] & (1u << s)) {
        row_of[r][static_cast<size_t>(s)] = static_cast<int>(rows_.size());
        Row row;
        row.rank = static_cast<int32_t>(r);
        row.stream = static_cast<SimStream>(s);
        rows_.push_back(std::move(row));
      }
    }
  }

  std::vector<std::vector<int32_t>> members(rows_.size());
  kind_used_.assign(kOpKindCount, false);
  full_lo_ = 0;
  full_hi_ = 0;
  for (size_t i = 0; i < timeline_.ops.size(); ++i) {
    const TimelineOp& op = timeline_.ops[i];
    if (!IsDrawableOp(op, nranks)) continue;
    const auto row = row_of[static_cast<size_t>(op.rank)][static_cast<size_t>(op.stream)];
    members[static_cast<size_t>(row)].push_back(static_cast<int32_t>(i));
    kind_used_[static_cast<size_t>(ClassifyOp(op))] = true;
    full_lo_ = std::min(full_lo_, op.start_s);
    full_hi_ = std::max(full_hi_, std::max(op.start_s, op.end_s));
  }
  if (!(full_hi_ > full_lo_)) full_hi_ = full_lo_ + 1e-3;

  for (size_t r = 0; r < rows_.size(); ++r) {
    Row& row = rows_[r];
    std::vector<int32_t>& ids = members[r];
    std::stable_sort(ids.begin(), ids.end(), [&](int32_t a, int32_t b) {
      return timeline_.ops[static_cast<size_t>(a)].start_s <
             timeline_.ops[static_cast<size_t>(b)].start_s;
    });
    row.start_s.reserve(ids.size());
    row.end_s.reserve(ids.size());
    row.reach_s.reserve(ids.size());
    row.kind.reserve(ids.size());
    double reach = -kInfinity;
    const TimelineOp* first = nullptr;  // of the current run of bars
    LabelRun run;
    const auto close_run = [&] {
      if (first == nullptr || !IsLabelledPass(*first)) return;
      run.reach_s = row.labels.empty() ? run.end_s : std::max(row.labels.back().reach_s, run.end_s);
      run.text = QString::number(first->microbatch);
      row.labels.push_back(run);
    };
    for (int32_t id : ids) {
      const TimelineOp& op = timeline_.ops[static_cast<size_t>(id)];
      const double end = std::max(op.start_s, op.end_s);
      reach = std::max(reach, end);
      row.start_s.push_back(op.start_s);
      row.end_s.push_back(end);
      row.reach_s.push_back(reach);
      row.kind.push_back(ClassifyOp(op));
      if (row.stream != SimStream::kCompute) continue;
      if (first != nullptr && SameRun(*first, op)) {
        run.end_s = std::max(run.end_s, end);
        continue;
      }
      close_run();
      first = &op;
      run.start_s = op.start_s;
      run.end_s = end;
    }
    close_run();
    row.op = std::move(ids);
  }

  visible_lo_ = full_lo_;
  visible_hi_ = full_hi_;
  Relayout();
  updateGeometry();
  update();
  emit VisibleRangeChanged(visible_lo_, visible_hi_);
}

void GanttView::Clear(const QString& reason) {
  timeline_ = Timeline{};
  has_timeline_ = false;
  reason_ = reason;
  rows_.clear();
  kind_used_.clear();
  full_lo_ = full_hi_ = 0;
  const bool moved = visible_lo_ != 0 || visible_hi_ != 0;
  visible_lo_ = visible_hi_ = 0;
  dragging_ = false;
  Relayout();
  updateGeometry();
  update();
  if (moved) emit VisibleRangeChanged(0, 0);
}

int GanttView::RowCount() const { return static_cast<int>(rows_.size()); }

int32_t GanttView::RowRank(int row) const { return rows_[static_cast<size_t>(row)].rank; }

SimStream GanttView::RowStream(int row) const { return rows_[static_cast<size_t>(row)].stream; }

QRect GanttView::RowRect(int row) const {
  const int left = gutter_width_;
  return QRect(left, rows_[static_cast<size_t>(row)].top, static_cast<int>(PlotRight()) - left,
               row_height_);
}

double GanttView::PlotRight() const { return std::max(gutter_width_ + 1, width() - kRightMargin); }

void GanttView::SetVisibleRange(double start_s, double end_s) {
  if (!has_timeline_ || !std::isfinite(start_s) || !std::isfinite(end_s) || end_s <= start_s) {
    return;
  }
  const double full = full_hi_ - full_lo_;
  double lo = full_lo_, hi = full_hi_;
  if (end_s - start_s < full) {
    double span = end_s - start_s;
    const double min_span = std::min(full, std::max(kMinSpanS, full * 1e-6));
    if (span < min_span) {
      start_s = (start_s + end_s) / 2 - min_span / 2;
      span = min_span;
    }
    lo = std::clamp(start_s, full_lo_, full_hi_ - span);
    hi = std::min(lo + span, full_hi_);
  }
  if (lo == visible_lo_ && hi == visible_hi_) return;
  visible_lo_ = lo;
  visible_hi_ = hi;
  update();
  emit VisibleRangeChanged(visible_lo_, visible_hi_);
}

void GanttView::ResetZoom() { SetVisibleRange(full_lo_, full_hi_); }

void GanttView::Zoom(double factor, double anchor_x) {
  if (!has_timeline_ || !(factor > 0)) return;
  const double t = TimeAt(std::clamp(anchor_x, PlotLeft(), PlotRight()));
  SetVisibleRange(t - (t - visible_lo_) * factor, t + (visible_hi_ - t) * factor);
}

void GanttView::PanPixels(double pixels) {
  const double dt = pixels * (visible_hi_ - visible_lo_) / (PlotRight() - PlotLeft());
  SetVisibleRange(visible_lo_ + dt, visible_hi_ + dt);
}

double GanttView::XAt(double t_s) const {
  if (!(visible_hi_ > visible_lo_)) return PlotLeft();
  const Scale x{visible_lo_, visible_hi_, PlotLeft(), PlotRight(), false};
  return x(t_s);
}

double GanttView::TimeAt(double x) const {
  return visible_lo_ + (x - PlotLeft()) / (PlotRight() - PlotLeft()) * (visible_hi_ - visible_lo_);
}

int GanttView::RowAtY(double y) const {
  const auto it = std::upper_bound(rows_.begin(), rows_.end(), y,
                                   [](double v, const Row& row) { return v < row.top; });
  if (it == rows_.begin()) return -1;
  const auto row = static_cast<int>(it - rows_.begin()) - 1;
  return y < rows_[static_cast<size_t>(row)].top + row_height_ ? row : -1;
}

const TimelineOp* GanttView::OpAt(const QPointF& pos) const {
  if (!has_timeline_ || pos.x() < PlotLeft() || pos.x() > PlotRight()) return nullptr;
  const int r = RowAtY(pos.y());
  if (r < 0) return nullptr;
  const Row& row = rows_[static_cast<size_t>(r)];
  const double t = TimeAt(pos.x());
  const auto op = [&](size_t i) { return &timeline_.ops[static_cast<size_t>(row.op[i])]; };

  // The ops starting at or before t: the last one covers t unless an earlier, longer one does.
  const auto after = static_cast<size_t>(
      std::upper_bound(row.start_s.begin(), row.start_s.end(), t) - row.start_s.begin());
  for (size_t i = after; i > 0 && row.reach_s[i - 1] >= t; --i) {
    if (row.end_s[i - 1] >= t) return op(i - 1);
  }
  // Else the nearest op within one pixel, so that bars narrower than a pixel can be hovered.
  const double tolerance = (visible_hi_ - visible_lo_) / (PlotRight() - PlotLeft());
  const double before_gap = after > 0 ? t - row.end_s[after - 1] : kInfinity;
  const double after_gap = after < row.start_s.size() ? row.start_s[after] - t : kInfinity;
  if (std::min(before_gap, after_gap) > tolerance) return nullptr;
  return before_gap <= after_gap ? op(after - 1) : op(after);
}

QString GanttView::RankToolTip(int32_t rank) const {
  const TimelineRank& r = timeline_.ranks[static_cast<size_t>(rank)];
  const QString gpus = tr("%1 %2").arg(r.represents).arg(ToQ(Noun(r.represents, "GPU", "GPUs")));
  return tr("%1\nglobal rank %2, pipeline stage %3\nstands for %4 running the same ops")
      .arg(ToQ(r.name))
      .arg(r.global_rank)
      .arg(r.stage)
      .arg(gpus);
}

QString GanttView::ToolTipFor(const TimelineOp& op) const {
  QStringList lines;
  lines << FromView(op.name);
  lines << tr("rank: %1").arg(ToQ(timeline_.ranks[static_cast<size_t>(op.rank)].name));
  lines << tr("stream: %1").arg(StreamLabel(op.stream));
  if (op.microbatch >= 0) lines << tr("micro-batch: %1").arg(op.microbatch);
  if (op.chunk >= 0) lines << tr("chunk: %1").arg(op.chunk);
  if (op.layer >= 0) lines << tr("layer: %1").arg(op.layer);
  lines << tr("start: %1 ms").arg(op.start_s * 1e3, 0, 'f', 3);
  lines
      << tr("duration: %1 ms").arg((std::max(op.start_s, op.end_s) - op.start_s) * 1e3, 0, 'f', 3);
  if (op.bytes > 0) lines << tr("bytes: %1 GB").arg(Significant(op.bytes / 1e9));
  if (op.flops > 0) lines << tr("FLOPs: %1 TFLOP").arg(Significant(op.flops / 1e12));
  return lines.join(QLatin1Char('\n'));
}

void GanttView::Relayout() {
  const QFontMetricsF metrics(font());
  QFont bold = font();
  bold.setBold(true);
  const QFontMetricsF bold_metrics(bold);
  row_height_ = std::max(16, static_cast<int>(std::ceil(metrics.height())) + 2);

  // Gutter: bold rank names, then the stream names right-aligned against the plot.
  double rank_width = 0;
  for (const TimelineRank& rank : timeline_.ranks) {
    rank_width = std::max(rank_width, bold_metrics.horizontalAdvance(ToQ(rank.name)));
  }
  double stream_column = 0;
  for (const Row& row : rows_) {
    stream_column = std::max(stream_column, metrics.horizontalAdvance(StreamLabel(row.stream)));
  }
  const double wanted = kChartPadding + rank_width + 12 + stream_column + 8;
  gutter_width_ = static_cast<int>(std::ceil(std::min(wanted, 0.45 * std::max(width(), 300))));
  const double rank_room = gutter_width_ - kChartPadding - stream_column - 14;
  rank_names_.clear();
  for (const TimelineRank& rank : timeline_.ranks) {
    rank_names_.push_back(
        bold_metrics.elidedText(ToQ(rank.name), Qt::ElideRight, std::max(rank_room, 0.0)));
  }

  std::vector<LegendEntry> entries;
  for (int k = 0; k < static_cast<int>(kind_used_.size()); ++k) {
    if (!kind_used_[static_cast<size_t>(k)]) continue;
    const auto kind = static_cast<OpKind>(k);
    entries.push_back({FromView(OpKindLabel(kind)),
                       KindColors()[static_cast<size_t>(k)],
                       LegendEntry::Swatch::kBox,
                       {}});
  }
  const double legend_width = std::max(width() - 2 * kChartPadding, 100.0);
  legend_ =
      ChartLegend(std::move(entries), QPointF(kChartPadding, kChartPadding), legend_width, metrics);
  axis_top_ = kChartPadding + legend_.Height() + (legend_.Height() > 0 ? kChartPadding : 0);
  rows_top_ = static_cast<int>(std::ceil(axis_top_ + metrics.height())) + kGanttTickLength + 1;

  band_top_.assign(timeline_.ranks.size(), rows_top_);
  band_bottom_.assign(timeline_.ranks.size(), rows_top_);
  int y = rows_top_;
  for (size_t i = 0; i < rows_.size(); ++i) {
    const auto rank = static_cast<size_t>(rows_[i].rank);
    if (i == 0 || rows_[i - 1].rank != rows_[i].rank) {
      if (i > 0) y += kBandGap;
      band_top_[rank] = y;
    }
    rows_[i].top = y;
    y += row_height_;
    band_bottom_[rank] = y;
  }
  rows_bottom_ = y;
}

int GanttView::ContentHeight() const {
  return has_timeline_ ? rows_bottom_ + static_cast<int>(kChartPadding) : kEmptyHeight;
}

QSize GanttView::sizeHint() const {
  return QSize(gutter_width_ + kPreferredPlot + kRightMargin, ContentHeight());
}

QSize GanttView::minimumSizeHint() const {
  return QSize(gutter_width_ + kMinPlot + kRightMargin,
               has_timeline_ ? ContentHeight() : row_height_ * 3);
}

bool GanttView::event(QEvent* event) {
  if (event->type() == QEvent::ToolTip) {
    auto* help = static_cast<QHelpEvent*>(event);
    QString text;
    if (help->pos().x() < PlotLeft()) {
      const int row = RowAtY(help->pos().y());
      if (row >= 0) text = RankToolTip(rows_[static_cast<size_t>(row)].rank);
    } else if (const TimelineOp* op = dragging_ ? nullptr : OpAt(help->pos())) {
      text = ToolTipFor(*op);
    }
    ShowChartToolTip(help, this, text);
    return true;
  }
  return QWidget::event(event);
}

void GanttView::changeEvent(QEvent* event) {
  if (event->type() == QEvent::FontChange) {
    Relayout();
    updateGeometry();
    update();
  }
  QWidget::changeEvent(event);
}

void GanttView::resizeEvent(QResizeEvent* event) {
  const int before = ContentHeight();
  Relayout();
  if (ContentHeight() != before) updateGeometry();
  QWidget::resizeEvent(event);
}

void GanttView::wheelEvent(QWheelEvent* event) {
  const QPoint delta = event->angleDelta();
  if (!has_timeline_ || (event->modifiers() & Qt::ShiftModifier)) {
    event->ignore();
    return;
  }
  if (std::abs(delta.x()) > std::abs(delta.y())) {
    PanPixels(-delta.x() / kWheelNotch * kPanPerNotch * (PlotRight() - PlotLeft()));
  } else if (delta.y() != 0) {
    Zoom(std::pow(kZoomPerNotch, delta.y() / kWheelNotch), event->position().x());
  }
  event->accept();
}

void GanttView::mousePressEvent(QMouseEvent* event) {
  if (has_timeline_ && event->button() == Qt::LeftButton && event->position().x() >= PlotLeft()) {
    dragging_ = true;
    drag_x_ = event->position().x();
    setCursor(Qt::ClosedHandCursor);
    event->accept();
    return;
  }
  QWidget::mousePressEvent(event);
}

void GanttView::mouseMoveEvent(QMouseEvent* event) {
  if (!dragging_) {
    QWidget::mouseMoveEvent(event);
    return;
  }
  PanPixels(drag_x_ - event->position().x());
  drag_x_ = event->position().x();
  event->accept();
}

void GanttView::mouseReleaseEvent(QMouseEvent* event) {
  if (dragging_ && event->button() == Qt::LeftButton) {
    dragging_ = false;
    unsetCursor();
    event->accept();
    return;
  }
  QWidget::mouseReleaseEvent(event);
}

void GanttView::mouseDoubleClickEvent(QMouseEvent* event) {
  if (has_timeline_ && event->button() == Qt::LeftButton) {
    ResetZoom();
    event->accept();
    return;
  }
  QWidget::mouseDoubleClickEvent(event);
}

void GanttView::keyPressEvent(QKeyEvent* event) {
  const double plot_width = PlotRight() - PlotLeft();
  const double centre = (PlotLeft() + PlotRight()) / 2;
  switch (has_timeline_ ? event->key() : Qt::Key_unknown) {
    case Qt::Key_Plus:
    case Qt::Key_Equal:
      Zoom(kZoomPerNotch, centre);
      break;
    case Qt::Key_Minus:
      Zoom(1 / kZoomPerNotch, centre);
      break;
    case Qt::Key_Left:
      PanPixels(-kPanPerNotch * plot_width);
      break;
    case Qt::Key_Right:
      PanPixels(kPanPerNotch * plot_width);
      break;
    case Qt::Key_Home:
      ResetZoom();
      break;
    default:
      QWidget::keyPressEvent(event);
      return;
  }
  event->accept();
}

void GanttView::paintEvent(QPaintEvent* event) {
  QPainter painter(this);
  const QRect dirty = event->rect();
  painter.fillRect(dirty, Qt::white);
  if (!has_timeline_) {
    PaintPlaceholder(painter, rect(), reason_);
    return;
  }
  const QFontMetricsF metrics(font());
  QFont bold = font();
  bold.setBold(true);

  const int count = std::max(2, static_cast<int>((PlotRight() - PlotLeft()) / kTickSpacing));
  const std::vector<double> ticks = LinearTicks(visible_lo_, visible_hi_, count);

  if (dirty.top() < rows_top_) {
    legend_.Paint(painter);
    PaintAxis(painter, ticks);
  }

  // The ranks and rows that intersect the dirty rectangle.
  const auto first_row = static_cast<size_t>(
      std::upper_bound(rows_.begin(), rows_.end(), dirty.top(),
                       [&](int y, const Row& row) { return y < row.top + row_height_; }) -
      rows_.begin());
  const auto last_row =
      static_cast<size_t>(std::upper_bound(rows_.begin(), rows_.end(), dirty.bottom(),
                                           [](int y, const Row& row) { return y < row.top; }) -
                          rows_.begin());
  if (first_row >= last_row) return;

  // Bands and gutter texts.
  for (size_t i = first_row; i < last_row; ++i) {
    const auto rank = static_cast<size_t>(rows_[i].rank);
    if (i == first_row || rows_[i - 1].rank != rows_[i].rank) {
      painter.fillRect(QRect(0, band_top_[rank], width(), band_bottom_[rank] - band_top_[rank]),
                       kBandColors[rank % 2]);
    }
  }
  const double baseline = (row_height_ + metrics.ascent() - metrics.descent()) / 2;
  painter.setPen(kChartInk);
  for (size_t i = first_row; i < last_row; ++i) {
    const Row& row = rows_[i];
    const QString name = StreamLabel(row.stream);
    painter.drawText(
        QPointF(gutter_width_ - 8 - metrics.horizontalAdvance(name), row.top + baseline), name);
  }
  painter.setFont(bold);
  for (size_t i = first_row; i < last_row; ++i) {
    const auto rank = static_cast<size_t>(rows_[i].rank);
    if (rows_[i].top == band_top_[rank]) {
      painter.drawText(QPointF(kChartPadding, rows_[i].top + baseline), rank_names_[rank]);
    }
  }
  painter.setFont(font());

  // Grid lines, then the bars and their labels, clipped to the plot.
  const QRect plot(gutter_width_, rows_top_, static_cast<int>(PlotRight()) - gutter_width_,
                   rows_bottom_ - rows_top_);
  painter.setClipRect(plot.intersected(dirty));
  const Scale x{visible_lo_, visible_hi_, PlotLeft(), PlotRight(), false};
  painter.setPen(kGridColor);
  for (double t : ticks) {
    const auto px = static_cast<int>(std::round(x(t)));
    painter.drawLine(px, std::max(dirty.top(), rows_top_), px,
                     std::min(dirty.bottom(), rows_bottom_));
  }
  for (size_t i = first_row; i < last_row; ++i) PaintBars(painter, rows_[i]);
  painter.setPen(Qt::white);
  for (size_t i = first_row; i < last_row; ++i) PaintLabels(painter, rows_[i]);
}

void GanttView::PaintAxis(QPainter& painter, const std::vector<double>& ticks) const {
  // Labels in the unit of the tick step (s from 100 ms, ms from 100 µs, else µs), with as many
  // decimals as the step needs.
  const double step = ticks.size() >= 2 ? ticks[1] - ticks[0] : visible_hi_ - visible_lo_;
  double unit = 1;
  QString suffix = QStringLiteral(" s");
  if (step < 1e-4) {
    unit = 1e6;
    suffix = QStringLiteral(" µs");
  } else if (step < 0.1) {
    unit = 1e3;
    suffix = QStringLiteral(" ms");
  }
  const int decimals =
      std::clamp(static_cast<int>(std::ceil(-std::log10(step * unit) - 1e-9)), 0, 9);
  const QFontMetricsF metrics(font());
  const int axis_y = rows_top_ - 1;
  painter.setPen(kChartInk);
  painter.drawLine(gutter_width_, axis_y, static_cast<int>(PlotRight()), axis_y);
  const Scale x{visible_lo_, visible_hi_, PlotLeft(), PlotRight(), false};
  double previous_right = -kInfinity;
  for (double t : ticks) {
    const auto px = static_cast<int>(std::round(x(t)));
    painter.drawLine(px, axis_y - kGanttTickLength, px, axis_y);
    const QString label = QString::number(t * unit + 0.0, 'f', decimals) + suffix;
    const double w = metrics.horizontalAdvance(label);
    const double left = px - w / 2;
    if (left < previous_right + 8 || left + w > width()) continue;
    painter.drawText(QPointF(left, axis_top_ + metrics.ascent()), label);
    previous_right = left + w;
  }
}

// Bars as pixel columns: each op fills the columns from floor(x(start)) to ceil(x(end)), at
// least one; a column belongs to the first op that reaches it, so bars narrower than a pixel
// merge, and the ops hidden entirely in columns already filled are skipped by binary search.
// Neighbouring bars of one colour are filled as one rectangle. At most a few rectangles and
// searches per pixel column, whatever the number of ops.
void GanttView::PaintBars(QPainter& painter, const Row& row) const {
  const std::array<QColor, kOpKindCount>& colors = KindColors();
  const Scale x{visible_lo_, visible_hi_, PlotLeft(), PlotRight(), false};
  const int y = row.top + kBarInset;
  const int h = row_height_ - 2 * kBarInset;
  const size_t n = row.start_s.size();
  const auto first_reaching = [&](size_t from, double t) {
    return static_cast<size_t>(
        std::partition_point(row.reach_s.begin() + static_cast<std::ptrdiff_t>(from),
                             row.reach_s.end(), [t](double reach) { return reach <= t; }) -
        row.reach_s.begin());
  };

  int run_begin = 0, run_end = 0;  // columns [run_begin, run_end) of the pending rectangle
  OpKind run_kind = OpKind::kForward;
  bool has_run = false;
  const auto flush = [&] {
    if (has_run) {
      painter.fillRect(QRect(run_begin, y, run_end - run_begin, h),
                       colors[static_cast<size_t>(run_kind)]);
    }
  };
  for (size_t i = first_reaching(0, visible_lo_); i < n && row.start_s[i] < visible_hi_;) {
    const auto c0 = static_cast<int>(std::floor(x(std::max(row.start_s[i], visible_lo_))));
    const int c1 =
        std::max(c0 + 1, static_cast<int>(std::ceil(x(std::min(row.end_s[i], visible_hi_)))));
    const int begin = has_run ? std::max(c0, run_end) : c0;
    if (begin < c1) {
      if (has_run && row.kind[i] == run_kind && begin == run_end) {
        run_end = c1;
      } else {
        flush();
        run_begin = begin;
        run_end = c1;
        run_kind = row.kind[i];
        has_run = true;
      }
    }
    ++i;
    if (i < n && row.reach_s[i] <= TimeAt(run_end)) i = first_reaching(i, TimeAt(run_end));
  }
  flush();
}

void GanttView::PaintLabels(QPainter& painter, const Row& row) const {
  if (row.labels.empty()) return;
  const QFontMetricsF metrics(font());
  const Scale x{visible_lo_, visible_hi_, PlotLeft(), PlotRight(), false};
  const double baseline = row.top + (row_height_ + metrics.ascent() - metrics.descent()) / 2;
  const auto first =
      std::partition_point(row.labels.begin(), row.labels.end(),
                           [&](const LabelRun& r) { return r.reach_s <= visible_lo_; });
  for (auto it = first; it != row.labels.end() && it->start_s < visible_hi_; ++it) {
    // Centred on the run's visible part, so a run wider than the view keeps its number.
    const double x0 = std::max(x(it->start_s), PlotLeft());
    const double x1 = std::min(x(it->end_s), PlotRight());
    if (x1 - x0 < kMinLabelRun) continue;
    const double w = metrics.horizontalAdvance(it->text);
    if (x1 - x0 < w + 4) continue;
    painter.drawText(QPointF((x0 + x1 - w) / 2, baseline), it->text);
  }
}

}  // namespace gpuplan
