#include "simulator/trace_json.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string_view>
#include <unordered_set>

#include "common/file_write.h"
#include "common/limits.h"
#include "common/str_format.h"

namespace gpuplan {
namespace {

// One argument of an event's "args" object.
struct Arg {
  enum class Type : uint8_t { kInt, kDouble, kString };
  std::string_view key;
  Type type = Type::kInt;
  int64_t i = 0;
  double d = 0;
  std::string_view s;
};

// One trace event, as both serialisers see it. Optional fields are left out when unset.
struct Event {
  char ph = 'X';
  std::string_view name;
  std::string_view cat;  // empty: no "cat"
  int64_t pid = 0;
  int64_t tid = -1;  // < 0: no "tid"
  bool has_ts = false;
  double ts_us = 0;
  bool has_dur = false;
  double dur_us = 0;
  int64_t id = -1;              // < 0: no "id"
  bool bind_enclosing = false;  // "bp": "e"
  std::array<Arg, 5> args;
  int arg_count = 0;

  void Add(std::string_view key, int64_t v) {
    args[arg_count++] = {key, Arg::Type::kInt, v, 0, {}};
  }
  void Add(std::string_view key, double v) {
    args[arg_count++] = {key, Arg::Type::kDouble, 0, v, {}};
  }
  void Add(std::string_view key, std::string_view v) {
    args[arg_count++] = {key, Arg::Type::kString, 0, 0, v};
  }
};

// The non-metadata events, sorted: ts, then kind, then longer slices first, then input order.
enum class Kind : uint8_t { kSlice, kCounter, kFlowStart, kFlowEnd };
struct Record {
  int64_t ts_ns;
  Kind kind;
  int64_t dur_ns;
  int32_t index;  // into ops, activation_memory or flows
};

constexpr std::string_view kFlowName = "pp";
constexpr std::string_view kCounterName = "activation memory";

double Us(int64_t ns) { return static_cast<double>(ns) / 1e3; }

// Calls `sink(const Event&)` for every event of the trace, in output order.
template <typename Sink>
void ForEachEvent(const Timeline& t, Sink&& sink) {
  const size_t nranks = t.ranks.size();
  const auto rank_ok = [&](int32_t r) { return r >= 0 && static_cast<size_t>(r) < nranks; };

  // Ops in whole nanoseconds; invalid ones marked with dur -1.
  std::vector<int64_t> start_ns(t.ops.size()), dur_ns(t.ops.size(), -1);
  std::vector<uint32_t> streams_used(nranks, 0);
  int32_t max_chunk = -1;
  for (size_t i = 0; i < t.ops.size(); ++i) {
    const TimelineOp& op = t.ops[i];
    const int stream = static_cast<int>(op.stream);
    if (!rank_ok(op.rank) || stream < 0 || stream >= kSimStreamCount ||
        !std::isfinite(op.start_s) || !std::isfinite(op.end_s)) {
      continue;
    }
    start_ns[i] = std::llround(op.start_s * 1e9);
    dur_ns[i] = std::max<int64_t>(0, std::llround(op.end_s * 1e9) - start_ns[i]);
    streams_used[static_cast<size_t>(op.rank)] |= 1u << stream;
    max_chunk = std::max(max_chunk, op.chunk);
  }
  const bool multi_chunk = max_chunk >= 1;
  // Counters go on the compute thread (Perfetto would otherwise take tid = pid).
  constexpr int kCounterTid = static_cast<int>(SimStream::kCompute) + 1;
  for (const CounterSample& c : t.activation_memory) {
    if (rank_ok(c.rank)) streams_used[static_cast<size_t>(c.rank)] |= 1u << (kCounterTid - 1);
  }
  const auto op_ok = [&](int32_t i) {
    return i >= 0 && static_cast<size_t>(i) < t.ops.size() && dur_ns[static_cast<size_t>(i)] >= 0;
  };

  // Metadata.
  for (size_t r = 0; r < nranks; ++r) {
    const TimelineRank& rank = t.ranks[r];
    const auto pid = static_cast<int64_t>(r) + 1;
    Event e;
    e.ph = 'M';
    e.pid = pid;
    e.name = "process_name";
    e.Add("name", std::string_view(rank.name));
    sink(e);
    e.arg_count = 0;
    e.name = "process_sort_index";
    e.Add("sort_index", static_cast<int64_t>(r));
    sink(e);
    const std::string labels = "global rank " + std::to_string(rank.global_rank) + ", stage " +
                               std::to_string(rank.stage) + ", represents " +
                               std::to_string(rank.represents) + " " +
                               Noun(rank.represents, "GPU", "GPUs");
    e.arg_count = 0;
    e.name = "process_labels";
    e.Add("labels", std::string_view(labels));
    sink(e);
    for (int s = 0; s < kSimStreamCount; ++s) {
      if (!(streams_used[r] & (1u << s))) continue;
      e.tid = s + 1;
      e.arg_count = 0;
      e.name = "thread_name";
      e.Add("name", StreamName(static_cast<SimStream>(s)));
      sink(e);
      e.arg_count = 0;
      e.name = "thread_sort_index";
      e.Add("sort_index", static_cast<int64_t>(s));
      sink(e);
    }
  }

  // Slices, counters and flows, sorted by time.
  std::vector<Record> records;
  records.reserve(t.ops.size() + t.activation_memory.size() + 2 * t.flows.size());
  for (size_t i = 0; i < t.ops.size(); ++i) {
    if (dur_ns[i] >= 0) {
      records.push_back({start_ns[i], Kind::kSlice, dur_ns[i], static_cast<int32_t>(i)});
    }
  }
  for (size_t i = 0; i < t.activation_memory.size(); ++i) {
    const CounterSample& c = t.activation_memory[i];
    if (rank_ok(c.rank) && std::isfinite(c.time_s) && std::isfinite(c.bytes)) {
      records.push_back({std::llround(c.time_s * 1e9), Kind::kCounter, 0, static_cast<int32_t>(i)});
    }
  }
  // The middle of an op's slice: strictly inside it whenever it lasts 2 ns or more.
  const auto middle = [&](int32_t op) {
    const auto i = static_cast<size_t>(op);
    return start_ns[i] + dur_ns[i] / 2;
  };
  for (size_t i = 0; i < t.flows.size(); ++i) {
    const TimelineFlow& f = t.flows[i];
    if (!op_ok(f.from) || !op_ok(f.to)) continue;
    records.push_back({middle(f.from), Kind::kFlowStart, 0, static_cast<int32_t>(i)});
    records.push_back({middle(f.to), Kind::kFlowEnd, 0, static_cast<int32_t>(i)});
  }
  std::sort(records.begin(), records.end(), [](const Record& a, const Record& b) {
    if (a.ts_ns != b.ts_ns) return a.ts_ns < b.ts_ns;
    if (a.kind != b.kind) return a.kind < b.kind;
    if (a.dur_ns != b.dur_ns) return a.dur_ns > b.dur_ns;
    return a.index < b.index;
  });

  std::string name;
  for (const Record& rec : records) {
    Event e;
    e.has_ts = true;
    e.ts_us = Us(rec.ts_ns);
    switch (rec.kind) {
      case Kind::kSlice: {
        const TimelineOp& op = t.ops[static_cast<size_t>(rec.index)];
        name.assign(op.name);
        if (op.microbatch >= 0) {
          name += " mb";
          name += std::to_string(op.microbatch);
        }
        if (op.chunk >= 0 && multi_chunk) {
          name += " c";
          name += std::to_string(op.chunk);
        }
        e.ph = 'X';
        e.name = name;
        e.cat = StreamName(op.stream);
        e.pid = op.rank + 1;
        e.tid = static_cast<int>(op.stream) + 1;
        e.has_dur = true;
        e.dur_us = Us(rec.dur_ns);
        if (op.microbatch >= 0) e.Add("microbatch", static_cast<int64_t>(op.microbatch));
        if (op.chunk >= 0) e.Add("chunk", static_cast<int64_t>(op.chunk));
        if (op.layer >= 0) e.Add("layer", static_cast<int64_t>(op.layer));
        if (op.bytes > 0 && std::isfinite(op.bytes)) e.Add("bytes", op.bytes);
        if (op.flops > 0 && std::isfinite(op.flops)) e.Add("flops", op.flops);
        break;
      }
      case Kind::kCounter: {
        const CounterSample& c = t.activation_memory[static_cast<size_t>(rec.index)];
        e.ph = 'C';
        e.name = kCounterName;
        e.pid = c.rank + 1;
        e.tid = kCounterTid;
        e.Add("GB", c.bytes / 1e9);
        break;
      }
      case Kind::kFlowStart:
      case Kind::kFlowEnd: {
        const TimelineFlow& f = t.flows[static_cast<size_t>(rec.index)];
        const bool start = rec.kind == Kind::kFlowStart;
        const TimelineOp& op = t.ops[static_cast<size_t>(start ? f.from : f.to)];
        e.ph = start ? 's' : 'f';
        e.name = kFlowName;
        e.cat = kFlowName;
        e.pid = op.rank + 1;
        e.tid = static_cast<int>(op.stream) + 1;
        e.id = static_cast<int64_t>(rec.index) + 1;
        e.bind_enclosing = !start;
        break;
      }
    }
    sink(e);
  }
}

// otherData: the title, then the facts whose key is new.
template <typename Put>
void ForEachInfo(const TraceInfo& info, Put&& put) {
  std::unordered_set<std::string_view> seen = {"title"};
  put(std::string_view("title"), std::string_view(info.title));
  for (const auto& [key, value] : info.facts) {
    if (seen.insert(key).second) put(std::string_view(key), std::string_view(value));
  }
}

nlohmann::json ToJson(const Event& e) {
  nlohmann::json j = nlohmann::json::object();
  j["ph"] = std::string(1, e.ph);
  j["name"] = e.name;
  if (!e.cat.empty()) j["cat"] = e.cat;
  j["pid"] = e.pid;
  if (e.tid >= 0) j["tid"] = e.tid;
  if (e.has_ts) j["ts"] = e.ts_us;
  if (e.has_dur) j["dur"] = e.dur_us;
  if (e.id >= 0) j["id"] = e.id;
  if (e.bind_enclosing) j["bp"] = "e";
  if (e.arg_count > 0) {
    nlohmann::json& args = j["args"];
    for (int k = 0; k < e.arg_count; ++k) {
      const Arg& a = e.args[static_cast<size_t>(k)];
      switch (a.type) {
        case Arg::Type::kInt:
          args[std::string(a.key)] = a.i;
          break;
        case Arg::Type::kDouble:
          args[std::string(a.key)] = a.d;
          break;
        case Arg::Type::kString:
          args[std::string(a.key)] = a.s;
          break;
      }
    }
  }
  return j;
}

// Compact JSON text, appended to a string: the same values as ToJson, without building the tree.
class JsonWriter {
 public:
  explicit JsonWriter(std::string& out) : out_(out) {}

  void String(std::string_view s) {
    out_ += '"';
    size_t run = 0;  // start of the pending run of characters that need no escape
    for (size_t i = 0; i < s.size(); ++i) {
      const auto c = static_cast<unsigned char>(s[i]);
      if (c >= 0x20 && c != '"' && c != '\\') continue;
      out_.append(s.substr(run, i - run));
      run = i + 1;
      switch (c) {
        case '"':
          out_ += "\\\"";
          break;
        case '\\':
          out_ += "\\\\";
          break;
        case '\n':
          out_ += "\\n";
          break;
        case '\t':
          out_ += "\\t";
          break;
        case '\r':
          out_ += "\\r";
          break;
        default: {
          char buf[8];
          std::snprintf(buf, sizeof(buf), "\\u%04x", static_cast<unsigned>(c));
          out_ += buf;
        }
      }
    }
    out_.append(s.substr(run));
    out_ += '"';
  }
  void Number(int64_t v) {
    char buf[24];
    const auto res = std::to_chars(buf, buf + sizeof(buf), v);
    out_.append(buf, res.ptr);
  }
  // Shortest text that reads back as `v`; callers pass finite values only.
  void Number(double v) {
    char buf[32];
    const auto res = std::to_chars(buf, buf + sizeof(buf), v);
    out_.append(buf, res.ptr);
  }
  // `"key":` after a comma unless it is the first member of its object.
  void Key(std::string_view key, bool first = false) {
    if (!first) out_ += ',';
    String(key);
    out_ += ':';
  }

  void Write(const Event& e) {
    out_ += "{\"ph\":\"";
    out_ += e.ph;
    out_ += '"';
    Key("name");
    String(e.name);
    if (!e.cat.empty()) {
      Key("cat");
      String(e.cat);
    }
    Key("pid");
    Number(e.pid);
    if (e.tid >= 0) {
      Key("tid");
      Number(e.tid);
    }
    if (e.has_ts) {
      Key("ts");
      Number(e.ts_us);
    }
    if (e.has_dur) {
      Key("dur");
      Number(e.dur_us);
    }
    if (e.id >= 0) {
      Key("id");
      Number(e.id);
    }
    if (e.bind_enclosing) out_ += ",\"bp\":\"e\"";
    if (e.arg_count > 0) {
      Key("args");
      out_ += '{';
      for (int k = 0; k < e.arg_count; ++k) {
        const Arg& a = e.args[static_cast<size_t>(k)];
        Key(a.key, k == 0);
        switch (a.type) {
          case Arg::Type::kInt:
            Number(a.i);
            break;
          case Arg::Type::kDouble:
            Number(a.d);
            break;
          case Arg::Type::kString:
            String(a.s);
            break;
        }
      }
      out_ += '}';
    }
    out_ += '}';
  }

 private:
  std::string& out_;
};

std::string ChromeTraceText(const Timeline& timeline, const TraceInfo& info) {
  std::string out;
  out.reserve(256 + 160 * (timeline.ops.size() + timeline.activation_memory.size()) +
              200 * timeline.flows.size());
  JsonWriter w(out);
  out += "{\"traceEvents\":[";
  bool first = true;
  ForEachEvent(timeline, [&](const Event& e) {
    if (!first) out += ",\n";
    first = false;
    w.Write(e);
  });
  out += "],\"displayTimeUnit\":\"ms\",\"otherData\":{";
  first = true;
  ForEachInfo(info, [&](std::string_view key, std::string_view value) {
    w.Key(key, first);
    first = false;
    w.String(value);
  });
  out += "}}\n";
  return out;
}

}  // namespace

nlohmann::json TimelineToChromeTrace(const Timeline& timeline, const TraceInfo& info) {
  nlohmann::json events = nlohmann::json::array();
  events.get_ref<nlohmann::json::array_t&>().reserve(
      timeline.ops.size() + timeline.activation_memory.size() + 2 * timeline.flows.size() +
      7 * timeline.ranks.size());
  ForEachEvent(timeline, [&](const Event& e) { events.push_back(ToJson(e)); });
  nlohmann::json other = nlohmann::json::object();
  ForEachInfo(
      info, [&](std::string_view key, std::string_view value) { other[std::string(key)] = value; });
  return {{"traceEvents", std::move(events)},
          {"displayTimeUnit", "ms"},
          {"otherData", std::move(other)}};
}

Expected<std::string> ChromeTraceFile(const std::string& path, const Timeline& timeline,
                                      const TraceInfo& info) {
  // Timestamps are whole nanoseconds in an int64_t: a later end would wrap around.
  for (const TimelineOp& op : timeline.ops) {
    if (!(op.end_s <= kMaxTraceSeconds)) {
      return Status::Invalid(path + ": the step lasts " + std::to_string(op.end_s) +
                             " s, beyond the trace limit of " + std::to_string(kMaxTraceSeconds) +
                             " s (docs/JOB_SPEC.md, Limits)");
    }
  }
  return ChromeTraceText(timeline, info);
}

Status WriteChromeTrace(const std::string& path, const Timeline& timeline, const TraceInfo& info) {
  Expected<std::string> text = ChromeTraceFile(path, timeline, info);
  if (!text.ok()) return text.status();
  return WriteFileAtomically(path, *text);
}

}  // namespace gpuplan
