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
  fuzz::ReadFileInNoBaseDir(data, size, SessionFromJson, SessionToJson,
                            "an accepted session round-trips through SessionToJson");
  return 0;
}
