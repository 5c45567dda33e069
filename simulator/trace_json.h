// A Timeline as a Chrome trace: JSON that the Perfetto UI (ui.perfetto.dev) and chrome://tracing
// open. The format is the "JSON Object Format" of the Trace Event Format (Google,
// docs.google.com/document/d/1CvAClvFfyA5R-PhYUmn5OOQtYMH4h6I0nSsKchNAySU).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"
#include "simulator/timeline.h"

namespace gpuplan {

/// Facts printed in the trace's metadata ("otherData").
struct TraceInfo {
  std::string title;
  /// Key and value, in order. A key that is "title" or that appeared before is left out.
  std::vector<std::pair<std::string, std::string>> facts;
};

/// The Chrome trace event format (Trace Event Format doc, "JSON Object Format"):
/// {"traceEvents": [...], "displayTimeUnit": "ms", "otherData": {"title": ..., facts...}}.
///
/// Mapping:
/// - Process per rank: pid = rank index + 1. Metadata ("ph": "M") events `process_name`
///   (args.name = TimelineRank::name), `process_sort_index` (args.sort_index = rank index) and
///   `process_labels` (args.labels: global rank, stage, GPUs represented).
/// - Thread per stream a rank uses (an op on it, or for compute also a counter sample): tid =
/// (int)SimStream + 1, with `thread_name`
///   (args.name = StreamName) and `thread_sort_index` (args.sort_index = (int)SimStream).
/// - Each TimelineOp: a complete event, "ph": "X", name = op name plus " mb<k>" when it has a
///   micro-batch and " c<k>" when it has a chunk and the timeline uses more than one chunk
///   ("forward mb3 c1"), "cat" = stream name, "ts" and "dur" in microseconds (rounded to whole
///   nanoseconds), "pid", "tid", and args with those of microbatch, chunk, layer (when >= 0),
///   bytes, flops (when > 0) that are set.
/// - Each TimelineFlow: a flow start ("ph": "s") on the sender's thread and a flow end
///   ("ph": "f", "bp": "e") on the receiver's, both "name" = "cat" = "pp", "id" = flow index + 1,
///   each at the middle of its op's slice, so that both bind to the enclosing slice (the spec's
///   rule for "s", and for "f" with binding point "e").
/// - Each activation-memory CounterSample: a counter event, "ph": "C", name "activation memory",
///   pid of its rank, tid of its compute stream (named even when the rank has no compute op;
///   without a tid, Perfetto would take tid = pid), args {"GB": bytes / 1e9}. Counters are
///   per process in both viewers.
/// Metadata events come first (by pid, then tid), then the others sorted by ts; at equal ts,
/// slices (longer first) before counters before flow events, else in input order.
/// Ops, samples and flows with a rank or op index out of range or a non-finite time are left out;
/// a negative duration becomes 0.
nlohmann::json TimelineToChromeTrace(const Timeline& timeline, const TraceInfo& info);

/// The text WriteChromeTrace writes to `path` (named in the error), or its kInvalid refusal of a
/// step longer than kMaxTraceSeconds; for a caller that writes it with other files as one set.
Expected<std::string> ChromeTraceFile(const std::string& path, const Timeline& timeline,
                                      const TraceInfo& info);

/// Writes TimelineToChromeTrace to `path` (compact JSON, the same value): first to a temporary
/// file in the same directory, then renamed over `path`, so the file is never half-written. The
/// directory must exist. An error (kUnavailable) names `path`; it leaves no temporary file behind.
/// A step longer than kMaxTraceSeconds (timestamps are int64 nanoseconds) is refused (kInvalid).
Status WriteChromeTrace(const std::string& path, const Timeline& timeline, const TraceInfo& info);

}  // namespace gpuplan
