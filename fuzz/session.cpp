// Harness: a GUI session file (docs/GUI.md) as `gpuplan-gui --session FILE` and File > Open read
// it: ParseJson, then SessionFromJson. The reader is plain C++ in the Qt library gpuplan_gui, so
// this harness is built only when Qt is found. Invariant: an accepted session written back with
// SessionToJson reads again to the same JSON. The session's file lies in fuzz::kNoBaseDir, the
// folder its job's relative {"hf_config": "path"} resolves against, so that an input never reads a
// file of the machine by a relative name (as the job-spec harnesses).
#include "gui/session.h"

#include "fuzz/fuzz_common.h"

using namespace gpuplan;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::optional<nlohmann::json> doc = fuzz::Json(data, size);
  if (!doc) return 0;
  const HardwareDb& db = fuzz::BuiltinDb();
  static const std::string origin = fuzz::FileInNoBaseDir("<fuzz>");
  static const std::string origin_again = fuzz::FileInNoBaseDir("<fuzz again>");
  Expected<Session> session = SessionFromJson(*doc, origin, db);
  if (!session.ok()) return 0;
  fuzz::RequireRoundTrip(
      *session, SessionToJson,
      [&db](const nlohmann::json& j) { return SessionFromJson(j, origin_again, db); },
      "an accepted session round-trips through SessionToJson");
  return 0;
}
