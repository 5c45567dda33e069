// WriteReport: the four report files, each written to a temporary file and renamed into place.
#include <filesystem>
#include <string>
#include <system_error>
#include <utility>

#include "common/file_write.h"
#include "planner/plan_json.h"
#include "planner/report.h"

namespace gpuplan {

namespace fs = std::filesystem;

Status WriteReport(const PlanResult& result, const std::string& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir, ec)) {
    return Status::Unavailable(dir + ": cannot create the report directory" +
                               (ec ? ": " + ec.message() : std::string()));
  }
  const std::string json =
      PlanResultToJson(result).dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
  const std::pair<const char*, std::string> files[] = {
      {"plan.md", PlanResultToMarkdown(result)},
      {"plan.html", PlanResultToHtml(result)},
      {"plan.json", json + "\n"},
      {"plans.csv", PlanResultToCsv(result)},
  };
  for (const auto& [name, content] : files) {
    GPUPLAN_RETURN_IF_ERROR(WriteFileAtomically((fs::path(dir) / name).string(), content));
  }
  return Status::Ok();
}

}  // namespace gpuplan
