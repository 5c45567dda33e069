// PlanResultToHtml: the report document as one self-contained HTML page with SVG charts.
#include <string>
#include <vector>

#include "planner/report.h"
#include "planner/report_charts.h"
#include "planner/report_document.h"
#include "planner/svg_chart.h"

namespace gpuplan {
namespace {

constexpr const char* kStyle = R"(
body { font: 14px/1.45 system-ui, sans-serif; color: #222; max-width: 980px; margin: 2em auto;
       padding: 0 1em; }
h1 { font-size: 1.6em; margin-bottom: 0.2em; }
h2 { font-size: 1.25em; border-bottom: 1px solid #ddd; padding-bottom: 0.2em; margin-top: 1.8em; }
.request { color: #555; }
table { border-collapse: collapse; margin: 0.8em 0; }
th, td { padding: 0.25em 0.7em; border-bottom: 1px solid #eee; text-align: left; }
thead th { border-bottom: 2px solid #ccc; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
table.facts th { font-weight: 600; color: #444; }
.note { color: #666; font-size: 0.9em; }
figure { margin: 1em 0; }
svg.chart { max-width: 100%; height: auto; font: 12px system-ui, sans-serif; }
)";

std::string Cell(const char* tag, const std::string& text, bool numeric) {
  return std::string("<") + tag + (numeric ? " class=\"num\"" : "") + ">" + HtmlEscape(text) +
         "</" + tag + ">";
}

std::string HtmlTable(const ReportTable& t) {
  std::string out = "<table>\n<thead><tr>";
  for (size_t c = 0; c < t.header.size(); ++c) out += Cell("th", t.header[c], t.numeric[c]);
  out += "</tr></thead>\n<tbody>\n";
  for (const auto& row : t.rows) {
    out += "<tr>";
    for (size_t c = 0; c < row.size(); ++c) out += Cell("td", row[c], t.numeric[c]);
    out += "</tr>\n";
  }
  return out + "</tbody>\n</table>\n";
}

std::string Section(const ReportSection& s, const PlanResult& result) {
  std::string out = "<section>\n<h2>" + HtmlEscape(s.title) + "</h2>\n";
  if (!s.facts.empty()) {
    out += "<table class=\"facts\">\n";
    for (const auto& [label, value] : s.facts) {
      out += "<tr>" + Cell("th", label, false) + Cell("td", value, false) + "</tr>\n";
    }
    out += "</table>\n";
  }
  for (const std::string& p : s.paragraphs) out += "<p>" + HtmlEscape(p) + "</p>\n";
  if (!s.table.header.empty()) out += HtmlTable(s.table);
  if (!s.table_note.empty()) out += "<p class=\"note\">" + HtmlEscape(s.table_note) + "</p>\n";
  if (!s.bullets.empty()) {
    out += "<ul>\n";
    for (const std::string& b : s.bullets) out += "<li>" + HtmlEscape(b) + "</li>\n";
    out += "</ul>\n";
  }
  for (ChartKind kind : s.charts) {
    const std::string svg = RenderChart(kind, result);
    if (!svg.empty()) out += "<figure>\n" + svg + "</figure>\n";
  }
  return out + "</section>\n";
}

}  // namespace

std::string PlanResultToHtml(const PlanResult& result) {
  const ReportDocument doc = BuildReportDocument(result);
  std::string out =
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>" +
      HtmlEscape(doc.title) + "</title>\n<style>" + kStyle + "</style>\n</head>\n<body>\n<h1>" +
      HtmlEscape(doc.title) + "</h1>\n<p class=\"request\">" + HtmlEscape(doc.request_line) +
      "</p>\n";
  for (const ReportSection& s : doc.sections) out += Section(s, result);
  return out + "</body>\n</html>\n";
}

}  // namespace gpuplan
