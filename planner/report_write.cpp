// WriteReport: the four report files, each written to a temporary file and renamed into place.
#include <filesystem>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "common/file_write.h"
#include "planner/plan_json.h"
#include "planner/report.h"

namespace gpuplan {

namespace fs = std::filesystem;

std::vector<std::string> ReportFileNames() {
  return {"plan.md", "plan.html", "plan.json", "plans.csv"};
}

std::vector<std::pair<std::string, std::string>> ReportFiles(const PlanResult& result,
                                                             const std::string& dir) {
  const std::string json =
      PlanResultToJson(result).dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
  const std::string contents[] = {PlanResultToMarkdown(result), PlanResultToHtml(result),
                                  json + "\n", PlanResultToCsv(result)};
  std::vector<std::pair<std::string, std::string>> files;
  const std::vector<std::string> names = ReportFileNames();
  for (size_t i = 0; i < names.size(); ++i) {
    files.emplace_back((fs::path(dir) / names[i]).string(), contents[i]);
  }
  return files;
}

Status CreateReportDirectory(const std::string& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir, ec)) {
    return Status::Unavailable(dir + ": cannot create the report directory" +
                               (ec ? ": " + ec.message() : std::string()));
  }
  return Status::Ok();
}

Status WriteReport(const PlanResult& result, const std::string& dir) {
  GPUPLAN_RETURN_IF_ERROR(CreateReportDirectory(dir));
  const std::vector<std::pair<std::string, std::string>> files = ReportFiles(result, dir);
  std::vector<FileContents> writes;
  for (const auto& [path, content] : files) writes.push_back({path, content});
  return WriteFilesAtomically(writes);
}

}  // namespace gpuplan
