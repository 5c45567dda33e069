// Small hand-written SVG drawing primitives for the HTML report: scales, ticks, shapes, axes
// and legends. Output is inline <svg> markup with no scripts and no external references.
#pragma once

#include <cstddef>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gpuplan {

/// Escapes & < > " ' for text and attribute values in HTML and SVG.
std::string HtmlEscape(std::string_view text);

/// Estimated width in pixels of `text` in the 12 px chart font: 0.6 em per character (UTF-8
/// code point), 10% more in bold. The estimate behind PlaceLabels and YAxis.
double EstimateTextWidth(std::string_view text, bool bold = false);

/// Maps a data interval [lo, hi] onto pixels [px_lo, px_hi], linearly or logarithmically
/// (log needs 0 < lo < hi). Values outside the interval map outside the pixel range.
struct Scale {
  double lo = 0, hi = 1;
  double px_lo = 0, px_hi = 1;
  bool log = false;
  double operator()(double v) const;
};

/// About `count` round tick values (steps of 1, 2 or 5 x 10^k) within [lo, hi].
std::vector<double> LinearTicks(double lo, double hi, int count);
/// The end of an axis from zero to at least `hi`: the first multiple of LinearTicks' step for
/// about 5 ticks at or above `hi` (87 -> 100 in steps of 20, 45 -> 50 in steps of 10).
double NiceCeiling(double hi);
/// Powers of `base` (> 1) within [lo, hi], lo > 0, thinned to every k-th from the smallest so
/// that at most `max_count` (>= 1) remain.
std::vector<double> PowerTicks(double lo, double hi, double base,
                               size_t max_count = std::numeric_limits<size_t>::max());
/// Round durations (1 s, 10 s, 1 min, 10 min, 1 h, 6 h, 1 d, 1 week, 30 d, 1 year, ...) within
/// [lo, hi] seconds, thinned to at most 8.
std::vector<double> DurationTicks(double lo, double hi);

/// An axis-aligned rectangle in pixels, x0 <= x1 and y0 <= y1.
struct Box {
  double x0 = 0, y0 = 0, x1 = 0, y1 = 0;
  /// True when the interiors intersect; boxes that only touch do not overlap.
  bool Overlaps(const Box& other) const;
  /// True when `other` lies entirely inside this box.
  bool Contains(const Box& other) const;
};

/// A text label for a point drawn as a circle of radius `r` at (x, y). An `emphasis` label is
/// drawn bold and is always shown.
struct LabelRequest {
  double x = 0, y = 0, r = 0;
  std::string text;
  bool emphasis = false;
};

/// Where PlaceLabels put a label: the arguments of SvgCanvas::Text (baseline at y) and the
/// label's estimated box.
struct PlacedLabel {
  double x = 0, y = 0;
  const char* anchor = "start";
  Box box;
};

/// Places point labels without collisions. Emphasised labels go first, then the others in
/// order; each takes the first of the positions right of, left of, above and below its point
/// whose estimated box (width: characters x 0.6 x the 12 px font, 10% more when bold) lies
/// inside `bounds` and overlaps no point and no label placed before it. A label with no such
/// position is dropped (nullopt), except an emphasised one: it takes its first position inside
/// `bounds` (else the one to the right) and may then overlap points or other emphasised labels.
/// Returns one entry per label in the order of `labels`; deterministic.
std::vector<std::optional<PlacedLabel>> PlaceLabels(const std::vector<LabelRequest>& labels,
                                                    const Box& bounds);

/// One legend entry: a colour swatch (dashed line when `dashed`) and its label.
struct LegendItem {
  std::string color;
  std::string label;
  bool dashed = false;
};

/// Builds one <svg> element. Coordinates are pixels from the top-left corner; every text and
/// tooltip is escaped. Styling comes from the CSS classes of the HTML page where noted.
class SvgCanvas {
 public:
  /// `title` becomes the accessible name (role="img", <title>).
  SvgCanvas(double width, double height, const std::string& title);

  void Line(double x1, double y1, double x2, double y2, const std::string& stroke,
            double stroke_width = 1, bool dashed = false);
  /// A filled rectangle with a hover tooltip (<title>) when `tooltip` is not empty.
  void Rect(double x, double y, double w, double h, const std::string& fill,
            const std::string& tooltip);
  void Circle(double cx, double cy, double r, const std::string& fill, const std::string& tooltip);
  void Polyline(const std::vector<std::pair<double, double>>& points, const std::string& stroke,
                bool dashed = false);
  /// `anchor`: "start", "middle" or "end". `bold` for emphasis. `fill`: the text colour, or
  /// empty for the inherited one.
  void Text(double x, double y, const std::string& text, const char* anchor = "start",
            bool bold = false, const std::string& fill = "");

  /// A horizontal axis line at pixel row `y` with tick marks and labels below it, and `title`
  /// centred under the labels.
  void XAxis(const Scale& s, double y, const std::vector<double>& ticks,
             const std::function<std::string(double)>& label, const std::string& title);
  /// A vertical axis line at pixel column `x` with labels on its left (or right when
  /// `right_side`), light grid lines across `grid_width` pixels when positive, and `title`
  /// rotated beside the labels (placed from the longest label's estimated width).
  void YAxis(const Scale& s, double x, const std::vector<double>& ticks,
             const std::function<std::string(double)>& label, const std::string& title,
             bool right_side = false, double grid_width = 0);
  /// Legend entries left to right from (x, y) in columns `column_width` pixels wide, wrapping
  /// after `per_row` entries.
  void Legend(double x, double y, const std::vector<LegendItem>& items, int per_row,
              double column_width);

  /// The finished <svg>...</svg> element.
  std::string Finish() const;
  /// As Finish, but also usable on its own (a .svg file): the root element declares the SVG
  /// namespace and the chart font (12 px system-ui, sans-serif) as presentation attributes,
  /// which the HTML page's CSS still overrides.
  std::string FinishStandalone() const;

 private:
  std::string Element(const std::string& root_attributes) const;

  double width_, height_;
  std::string title_;
  std::string body_;
};

}  // namespace gpuplan
