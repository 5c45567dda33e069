// PlanResultToMarkdown: the report document as GitHub-flavoured Markdown.
#include <string>
#include <string_view>
#include <vector>

#include "planner/report.h"
#include "planner/report_document.h"
#include "planner/svg_chart.h"

namespace gpuplan {
namespace {

// Text that Markdown shows literally: its punctuation backslash-escaped, HTML characters as
// entities (HtmlEscape).
std::string Escape(const std::string& text) {
  static constexpr std::string_view kMarkdownPunctuation = "\\`*_|[]#$";
  std::string out;
  for (char c : text) {
    if (kMarkdownPunctuation.find(c) != std::string_view::npos) {
      out += '\\';
      out += c;
    } else {
      out += HtmlEscape(std::string_view(&c, 1));
    }
  }
  return out;
}

std::string Row(const std::vector<std::string>& cells) {
  std::string out = "|";
  for (const std::string& c : cells) {
    out += ' ';
    out += Escape(c);
    out += " |";
  }
  return out + "\n";
}

std::string MarkdownTable(const ReportTable& t) {
  std::string out = Row(t.header) + "|";
  for (bool numeric : t.numeric) out += numeric ? "---:|" : "---|";
  out += "\n";
  for (const auto& row : t.rows) out += Row(row);
  return out;
}

}  // namespace

std::string PlanResultToMarkdown(const PlanResult& result) {
  const ReportDocument doc = BuildReportDocument(result);
  std::string out = "# " + Escape(doc.title) + "\n\n" + Escape(doc.request_line) + "\n\n";
  for (const ReportSection& s : doc.sections) {
    out += "## " + Escape(s.title) + "\n\n";
    for (const auto& [label, value] : s.facts) {
      out += "- **" + Escape(label) + "**: " + Escape(value) + "\n";
    }
    if (!s.facts.empty()) out += "\n";
    for (const std::string& p : s.paragraphs) out += Escape(p) + "\n\n";
    if (!s.table.header.empty()) out += MarkdownTable(s.table) + "\n";
    if (!s.table_note.empty()) out += Escape(s.table_note) + "\n\n";
    for (const std::string& b : s.bullets) out += "- " + Escape(b) + "\n";
    if (!s.bullets.empty()) out += "\n";
  }
  while (out.size() > 1 && out.ends_with("\n\n")) out.pop_back();
  return out;
}

}  // namespace gpuplan
