#include "planner/svg_chart.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <string>

namespace gpuplan {
namespace {

// Pixel coordinates with one decimal.
std::string N(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f", v);
  return buf;
}

// The chart font size (CSS of the HTML page) in pixels.
constexpr double kFontSize = 12;

// Estimated width of `text` in the chart font: 0.6 em per character (UTF-8 code point), 10%
// more in bold.
double TextWidth(std::string_view text, bool bold) {
  const auto chars = std::count_if(text.begin(), text.end(), [](char c) {
    return (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  });
  return static_cast<double>(chars) * 0.6 * kFontSize * (bold ? 1.1 : 1.0);
}

// Every k-th of `values` from the first, k chosen so that at most `max_count` remain.
std::vector<double> Thin(const std::vector<double>& values, size_t max_count) {
  const size_t stride = std::max<size_t>(1, (values.size() + max_count - 1) / max_count);
  std::vector<double> kept;
  for (size_t i = 0; i < values.size(); i += stride) kept.push_back(values[i]);
  return kept;
}

// The positions right of, left of, above and below the point of `label`, in that order.
std::array<PlacedLabel, 4> Candidates(const LabelRequest& label) {
  const double w = TextWidth(label.text, label.emphasis), h = kFontSize + 2, gap = label.r + 3;
  // A box with its top-left corner at (x0, y0); the baseline is 4 px below its centre.
  const auto at = [&](double x0, double y0, double text_x, const char* anchor) {
    return PlacedLabel{text_x, y0 + h / 2 + 4, anchor, Box{x0, y0, x0 + w, y0 + h}};
  };
  return {at(label.x + gap, label.y - h / 2, label.x + gap, "start"),
          at(label.x - gap - w, label.y - h / 2, label.x - gap, "end"),
          at(label.x - w / 2, label.y - gap - h, label.x, "middle"),
          at(label.x - w / 2, label.y + gap, label.x, "middle")};
}

// A round step (1, 2 or 5 x 10^k) at least `raw`.
double NiceStep(double raw) {
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  const double r = raw / magnitude;
  return (r <= 1 ? 1 : r <= 2 ? 2 : r <= 5 ? 5 : 10) * magnitude;
}

std::string TitleElement(const std::string& tooltip) {
  return tooltip.empty() ? "/>" : "><title>" + HtmlEscape(tooltip) + "</title>";
}

}  // namespace

double EstimateTextWidth(std::string_view text, bool bold) { return TextWidth(text, bold); }

std::string HtmlEscape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

double Scale::operator()(double v) const {
  double t = 0.5;
  if (log && lo > 0 && hi > lo && v > 0) {
    t = (std::log(v) - std::log(lo)) / (std::log(hi) - std::log(lo));
  } else if (!log && hi > lo) {
    t = (v - lo) / (hi - lo);
  }
  return px_lo + t * (px_hi - px_lo);
}

std::vector<double> LinearTicks(double lo, double hi, int count) {
  if (!(hi > lo) || count < 1) return {lo};
  const double step = NiceStep((hi - lo) / count);
  std::vector<double> ticks;
  for (double k = std::ceil(lo / step - 1e-9); k * step <= hi + 1e-9 * step; k += 1) {
    ticks.push_back(k * step + 0.0);  // + 0.0 turns -0 into 0
  }
  return ticks;
}

double NiceCeiling(double hi) {
  if (!(hi > 0)) return 1;
  const double step = NiceStep(hi / 5);
  return std::ceil(hi / step - 1e-9) * step;
}

std::vector<double> PowerTicks(double lo, double hi, double base, size_t max_count) {
  std::vector<double> ticks;
  if (!(lo > 0) || !(hi >= lo) || !(base > 1)) return ticks;
  const double first = std::ceil(std::log(lo) / std::log(base) - 1e-9);
  const double last = std::floor(std::log(hi) / std::log(base) + 1e-9);
  for (double k = first; k <= last; k += 1) ticks.push_back(std::pow(base, k));
  return Thin(ticks, max_count);
}

std::vector<double> DurationTicks(double lo, double hi) {
  constexpr double kMin = 60, kHour = 3600, kDay = 86400, kYear = 365 * kDay;
  constexpr double kRound[] = {1,         2,          5,         10,        20,         30,
                               kMin,      2 * kMin,   5 * kMin,  10 * kMin, 20 * kMin,  30 * kMin,
                               kHour,     2 * kHour,  3 * kHour, 6 * kHour, 12 * kHour, kDay,
                               2 * kDay,  3 * kDay,   7 * kDay,  14 * kDay, 30 * kDay,  60 * kDay,
                               90 * kDay, 180 * kDay, kYear,     2 * kYear, 5 * kYear,  10 * kYear};
  std::vector<double> inside;
  for (double t : kRound) {
    if (t >= lo && t <= hi) inside.push_back(t);
  }
  if (inside.empty()) return {std::sqrt(lo * hi)};
  return Thin(inside, 8);
}

bool Box::Overlaps(const Box& other) const {
  return x0 < other.x1 && other.x0 < x1 && y0 < other.y1 && other.y0 < y1;
}

bool Box::Contains(const Box& other) const {
  return x0 <= other.x0 && other.x1 <= x1 && y0 <= other.y0 && other.y1 <= y1;
}

std::vector<std::optional<PlacedLabel>> PlaceLabels(const std::vector<LabelRequest>& labels,
                                                    const Box& bounds) {
  std::vector<Box> taken;
  for (const LabelRequest& l : labels) {
    taken.push_back({l.x - l.r, l.y - l.r, l.x + l.r, l.y + l.r});
  }
  std::vector<size_t> order(labels.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_partition(order.begin(), order.end(), [&](size_t i) { return labels[i].emphasis; });
  std::vector<std::optional<PlacedLabel>> placed(labels.size());
  for (size_t i : order) {
    const std::array<PlacedLabel, 4> candidates = Candidates(labels[i]);
    std::optional<PlacedLabel> first_inside;
    for (const PlacedLabel& c : candidates) {
      if (!bounds.Contains(c.box)) continue;
      if (!first_inside) first_inside = c;
      if (std::none_of(taken.begin(), taken.end(),
                       [&](const Box& b) { return b.Overlaps(c.box); })) {
        placed[i] = c;
        break;
      }
    }
    if (!placed[i] && labels[i].emphasis) placed[i] = first_inside.value_or(candidates[0]);
    if (placed[i]) taken.push_back(placed[i]->box);
  }
  return placed;
}

SvgCanvas::SvgCanvas(double width, double height, const std::string& title)
    : width_(width), height_(height), title_(title) {}

void SvgCanvas::Line(double x1, double y1, double x2, double y2, const std::string& stroke,
                     double stroke_width, bool dashed) {
  body_ += "<line x1=\"" + N(x1) + "\" y1=\"" + N(y1) + "\" x2=\"" + N(x2) + "\" y2=\"" + N(y2) +
           "\" stroke=\"" + HtmlEscape(stroke) + "\" stroke-width=\"" + N(stroke_width) + "\"" +
           (dashed ? " stroke-dasharray=\"6,4\"" : "") + "/>\n";
}

void SvgCanvas::Rect(double x, double y, double w, double h, const std::string& fill,
                     const std::string& tooltip) {
  body_ += "<rect x=\"" + N(x) + "\" y=\"" + N(y) + "\" width=\"" + N(std::max(w, 0.0)) +
           "\" height=\"" + N(std::max(h, 0.0)) + "\" fill=\"" + HtmlEscape(fill) + "\"" +
           TitleElement(tooltip) + (tooltip.empty() ? "\n" : "</rect>\n");
}

void SvgCanvas::Circle(double cx, double cy, double r, const std::string& fill,
                       const std::string& tooltip) {
  body_ += "<circle cx=\"" + N(cx) + "\" cy=\"" + N(cy) + "\" r=\"" + N(r) + "\" fill=\"" +
           HtmlEscape(fill) + "\"" + TitleElement(tooltip) +
           (tooltip.empty() ? "\n" : "</circle>\n");
}

void SvgCanvas::Polyline(const std::vector<std::pair<double, double>>& points,
                         const std::string& stroke, bool dashed) {
  std::string pts;
  for (const auto& [x, y] : points) {
    if (!pts.empty()) pts += ' ';
    pts += N(x) + "," + N(y);
  }
  body_ += "<polyline fill=\"none\" stroke=\"" + HtmlEscape(stroke) + "\" stroke-width=\"2\"" +
           (dashed ? " stroke-dasharray=\"6,4\"" : "") + " points=\"" + pts + "\"/>\n";
}

void SvgCanvas::Text(double x, double y, const std::string& text, const char* anchor, bool bold,
                     const std::string& fill) {
  body_ += "<text x=\"" + N(x) + "\" y=\"" + N(y) + "\" text-anchor=\"" + anchor + "\"" +
           (bold ? " font-weight=\"bold\"" : "") +
           (fill.empty() ? std::string() : " fill=\"" + HtmlEscape(fill) + "\"") + ">" +
           HtmlEscape(text) + "</text>\n";
}

void SvgCanvas::XAxis(const Scale& s, double y, const std::vector<double>& ticks,
                      const std::function<std::string(double)>& label, const std::string& title) {
  Line(s.px_lo, y, s.px_hi, y, "#333");
  for (double t : ticks) {
    const double x = s(t);
    Line(x, y, x, y + 5, "#333");
    Text(x, y + 18, label(t), "middle");
  }
  Text((s.px_lo + s.px_hi) / 2, y + 36, title, "middle");
}

void SvgCanvas::YAxis(const Scale& s, double x, const std::vector<double>& ticks,
                      const std::function<std::string(double)>& label, const std::string& title,
                      bool right_side, double grid_width) {
  const double dir = right_side ? 1 : -1;
  Line(x, s.px_lo, x, s.px_hi, "#333");
  double widest = 0;
  for (double t : ticks) {
    const double y = s(t);
    const std::string text = label(t);
    widest = std::max(widest, TextWidth(text, false));
    if (grid_width > 0) Line(x, y, x + grid_width, y, "#e5e5e5");
    Line(x, y, x + 5 * dir, y, "#333");
    Text(x + 8 * dir, y + 4, text, right_side ? "start" : "end");
  }
  const double tx = x + dir * (20 + widest);
  const double ty = (s.px_lo + s.px_hi) / 2;
  body_ += "<text x=\"" + N(tx) + "\" y=\"" + N(ty) +
           "\" text-anchor=\"middle\" transform=\"rotate(" + N(right_side ? 90 : -90) + " " +
           N(tx) + " " + N(ty) + ")\">" + HtmlEscape(title) + "</text>\n";
}

void SvgCanvas::Legend(double x, double y, const std::vector<LegendItem>& items, int per_row,
                       double column_width) {
  constexpr double kRowHeight = 18;
  for (size_t i = 0; i < items.size(); ++i) {
    const double cx = x + column_width * static_cast<double>(i % static_cast<size_t>(per_row));
    const double cy = y + kRowHeight * static_cast<double>(i / static_cast<size_t>(per_row));
    if (items[i].dashed) {
      Line(cx, cy - 4, cx + 14, cy - 4, items[i].color, 2, true);
    } else {
      Rect(cx, cy - 10, 12, 12, items[i].color, "");
    }
    Text(cx + 18, cy, items[i].label);
  }
}

std::string SvgCanvas::Finish() const { return Element(""); }

std::string SvgCanvas::FinishStandalone() const {
  return Element(
      " xmlns=\"http://www.w3.org/2000/svg\" font-family=\"system-ui, sans-serif\" "
      "font-size=\"12\"");
}

std::string SvgCanvas::Element(const std::string& root_attributes) const {
  return "<svg" + root_attributes + " class=\"chart\" width=\"" + N(width_) + "\" height=\"" +
         N(height_) + "\" viewBox=\"0 0 " + N(width_) + " " + N(height_) +
         "\" role=\"img\" aria-label=\"" + HtmlEscape(title_) + "\">\n<title>" +
         HtmlEscape(title_) + "</title>\n" + body_ + "</svg>\n";
}

}  // namespace gpuplan
