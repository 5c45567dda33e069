// The Chrome trace export of a Timeline: event structure, units, metadata, flows bound inside
// their slices, counters, and WriteChromeTrace's file and failures. Timelines are built by hand.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "simulator/trace_json.h"
#include "tests/temp_dir.h"
#include "tests/timeline_op.h"

namespace gpuplan {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// Two pipeline stages, one micro-batch: forward on stage 0, a send to stage 1, forward and
// backward there, a send back, backward and the optimizer on stage 0; tensor-parallel
// all-reduces on both.
Timeline TwoStages() {
  Timeline t;
  t.ranks = {{"stage 0 (rank 0)", 0, 0, 8}, {"stage 1 (rank 8)", 8, 1, 8}};
  auto add = [&t](TimelineOp op) {
    t.ops.push_back(op);
    return static_cast<int32_t>(t.ops.size() - 1);
  };
  TimelineOp fwd0 = Op(0, SimStream::kCompute, "forward", 0.0, 0.010, 0);
  fwd0.chunk = 0;
  fwd0.flops = 1.5e12;
  add(fwd0);
  TimelineOp ar0 = Op(0, SimStream::kTp, "all-reduce", 0.004, 0.006);
  ar0.bytes = 1.0e8;
  ar0.layer = 3;
  add(ar0);
  TimelineOp send0 = Op(0, SimStream::kPpSend, "send", 0.010, 0.012, 0);
  send0.bytes = 2.0e7;
  const int32_t s0 = add(send0);
  TimelineOp recv1 = send0;
  recv1.rank = 1;
  recv1.stream = SimStream::kPpRecv;
  recv1.name = "recv";
  const int32_t r1 = add(recv1);
  add(Op(1, SimStream::kCompute, "forward", 0.012, 0.022, 0));
  add(Op(1, SimStream::kTp, "all-reduce", 0.015, 0.016));
  add(Op(1, SimStream::kCompute, "backward", 0.022, 0.040, 0));
  const int32_t s1 = add(Op(1, SimStream::kPpSend, "send", 0.040, 0.042, 0));
  const int32_t r0 = add(Op(0, SimStream::kPpRecv, "recv", 0.040, 0.042, 0));
  add(Op(0, SimStream::kCompute, "backward", 0.042, 0.060, 0));
  add(Op(0, SimStream::kCompute, "optimizer", 0.060, 0.065));
  t.flows = {{s0, r1}, {s1, r0}};
  t.activation_memory = {{0, 0.0, 0.0}, {0, 0.010, 1.5e9}, {1, 0.012, 2.0e9}};
  return t;
}

TraceInfo Info() {
  return {"Llama \"3\" 8B", {{"layout", "TP2 PP2"}, {"step", "65 ms"}, {"layout", "dup"}}};
}

const json& Events(const json& trace) { return trace.at("traceEvents"); }

std::vector<json> WithPh(const json& trace, const std::string& ph) {
  std::vector<json> out;
  for (const json& e : Events(trace)) {
    if (e.at("ph") == ph) out.push_back(e);
  }
  return out;
}

// The X event on (pid, tid) whose slice strictly contains ts, or null.
json EnclosingSlice(const json& trace, int pid, int tid, double ts) {
  for (const json& e : WithPh(trace, "X")) {
    if (e.at("pid") == pid && e.at("tid") == tid && e.at("ts").get<double>() < ts &&
        ts < e.at("ts").get<double>() + e.at("dur").get<double>()) {
      return e;
    }
  }
  return nullptr;
}

TEST(TraceJson, TopLevelObject) {
  const json trace = TimelineToChromeTrace(TwoStages(), Info());
  ASSERT_TRUE(trace.is_object());
  ASSERT_TRUE(trace.contains("traceEvents"));
  EXPECT_TRUE(Events(trace).is_array());
  EXPECT_EQ(trace.at("displayTimeUnit"), "ms");
  const json& other = trace.at("otherData");
  EXPECT_EQ(other.at("title"), "Llama \"3\" 8B");
  EXPECT_EQ(other.at("layout"), "TP2 PP2");  // the first of two "layout" facts
  EXPECT_EQ(other.at("step"), "65 ms");
  EXPECT_EQ(other.size(), 3u);
}

TEST(TraceJson, EveryEventHasPhasePidAndName) {
  const json trace = TimelineToChromeTrace(TwoStages(), Info());
  ASSERT_FALSE(Events(trace).empty());
  for (const json& e : Events(trace)) {
    ASSERT_TRUE(e.contains("ph")) << e;
    ASSERT_TRUE(e.contains("pid")) << e;
    ASSERT_TRUE(e.contains("name")) << e;
    EXPECT_TRUE(e.at("pid").is_number_integer()) << e;
    EXPECT_GE(e.at("pid").get<int>(), 1) << "pid 0 is avoided: " << e;
    if (e.at("ph") == "M") {
      ASSERT_TRUE(e.contains("args")) << e;
      const std::string name = e.at("name");
      if (name == "process_name" || name == "thread_name") {
        EXPECT_TRUE(e.at("args").at("name").is_string()) << e;
      }
    }
  }
}

TEST(TraceJson, EventCountsAndOrder) {
  const Timeline t = TwoStages();
  const json trace = TimelineToChromeTrace(t, Info());
  EXPECT_EQ(WithPh(trace, "X").size(), t.ops.size());
  EXPECT_EQ(WithPh(trace, "s").size(), t.flows.size());
  EXPECT_EQ(WithPh(trace, "f").size(), t.flows.size());
  EXPECT_EQ(WithPh(trace, "C").size(), t.activation_memory.size());
  // Metadata first, then the rest by non-decreasing ts.
  bool past_metadata = false;
  double last_ts = -1;
  for (const json& e : Events(trace)) {
    if (e.at("ph") == "M") {
      EXPECT_FALSE(past_metadata) << "metadata after timed events: " << e;
      continue;
    }
    past_metadata = true;
    ASSERT_TRUE(e.at("ts").is_number()) << e;
    EXPECT_GE(e.at("ts").get<double>(), last_ts) << e;
    last_ts = e.at("ts").get<double>();
  }
}

TEST(TraceJson, SlicesInMicroseconds) {
  const json trace = TimelineToChromeTrace(TwoStages(), Info());
  for (const json& e : WithPh(trace, "X")) {
    for (const char* key : {"ts", "dur", "tid", "cat"}) EXPECT_TRUE(e.contains(key)) << key << e;
    EXPECT_TRUE(e.at("ts").is_number()) << e;
    EXPECT_TRUE(e.at("dur").is_number()) << e;
  }
  // Stage 1's forward: 12 ms to 22 ms on its compute stream (tid 1).
  const json fwd = EnclosingSlice(trace, 2, 1, 15000);
  ASSERT_FALSE(fwd.is_null());
  EXPECT_EQ(fwd.at("name"), "forward mb0");
  EXPECT_EQ(fwd.at("cat"), "compute");
  EXPECT_NEAR(fwd.at("ts").get<double>(), 12000, 1e-6);
  EXPECT_NEAR(fwd.at("dur").get<double>(), 10000, 1e-6);
  // Stage 0's tensor-parallel all-reduce: 4 ms to 6 ms on "tp comm" (tid 2), with its bytes and
  // layer; no micro-batch, so no suffix and no microbatch arg.
  const json ar = EnclosingSlice(trace, 1, 2, 5000);
  ASSERT_FALSE(ar.is_null());
  EXPECT_EQ(ar.at("name"), "all-reduce");
  EXPECT_EQ(ar.at("cat"), "tp comm");
  EXPECT_NEAR(ar.at("ts").get<double>(), 4000, 1e-6);
  EXPECT_NEAR(ar.at("dur").get<double>(), 2000, 1e-6);
  EXPECT_EQ(ar.at("args").at("bytes"), 1.0e8);
  EXPECT_EQ(ar.at("args").at("layer"), 3);
  EXPECT_FALSE(ar.at("args").contains("microbatch"));
  EXPECT_FALSE(ar.at("args").contains("flops"));
}

TEST(TraceJson, ArgsCarryOnlyTheFieldsThatAreSet) {
  const json trace = TimelineToChromeTrace(TwoStages(), Info());
  const json fwd = EnclosingSlice(trace, 1, 1, 5000);  // stage 0's forward
  ASSERT_FALSE(fwd.is_null());
  const json& args = fwd.at("args");
  EXPECT_EQ(args.at("microbatch"), 0);
  EXPECT_EQ(args.at("chunk"), 0);
  EXPECT_EQ(args.at("flops"), 1.5e12);
  EXPECT_FALSE(args.contains("layer"));
  EXPECT_FALSE(args.contains("bytes"));
  EXPECT_EQ(fwd.at("name"), "forward mb0") << "one chunk in the timeline: no chunk suffix";
  const json opt = EnclosingSlice(trace, 1, 1, 62000);
  ASSERT_FALSE(opt.is_null());
  EXPECT_EQ(opt.at("name"), "optimizer");
  EXPECT_FALSE(opt.contains("args")) << opt;
}

TEST(TraceJson, ChunkSuffixOnlyWithSeveralChunks) {
  Timeline t = TwoStages();
  TimelineOp op = Op(1, SimStream::kCompute, "forward", 0.070, 0.080, 3);
  op.chunk = 1;
  t.ops.push_back(op);
  const json trace = TimelineToChromeTrace(t, Info());
  EXPECT_EQ(EnclosingSlice(trace, 2, 1, 75000).at("name"), "forward mb3 c1");
  EXPECT_EQ(EnclosingSlice(trace, 1, 1, 5000).at("name"), "forward mb0 c0");
  EXPECT_EQ(EnclosingSlice(trace, 2, 1, 15000).at("name"), "forward mb0");  // no chunk set
}

TEST(TraceJson, MetadataNamesEveryProcessAndThreadUsed) {
  const Timeline t = TwoStages();
  const json trace = TimelineToChromeTrace(t, Info());
  std::map<int, std::string> process_names;
  std::map<int, int> process_sort;
  std::map<std::pair<int, int>, std::string> thread_names;
  std::set<std::pair<int, int>> thread_sorted;
  for (const json& e : WithPh(trace, "M")) {
    const int pid = e.at("pid");
    if (e.at("name") == "process_name") process_names[pid] = e.at("args").at("name");
    if (e.at("name") == "process_sort_index") process_sort[pid] = e.at("args").at("sort_index");
    if (e.at("name") == "thread_name") {
      thread_names[{pid, e.at("tid").get<int>()}] = e.at("args").at("name");
    }
    if (e.at("name") == "thread_sort_index") thread_sorted.insert({pid, e.at("tid").get<int>()});
  }
  EXPECT_EQ(process_names.at(1), "stage 0 (rank 0)");
  EXPECT_EQ(process_names.at(2), "stage 1 (rank 8)");
  EXPECT_EQ(process_sort.at(1), 0);
  EXPECT_EQ(process_sort.at(2), 1);
  std::set<std::pair<int, int>> used;
  for (const json& e : WithPh(trace, "X")) {
    const int pid = e.at("pid"), tid = e.at("tid");
    used.insert({pid, tid});
    EXPECT_TRUE(process_names.contains(pid)) << e;
    ASSERT_TRUE(thread_names.contains({pid, tid})) << e;
    EXPECT_EQ(thread_names.at({pid, tid}), e.at("cat")) << "thread named after its stream";
    EXPECT_TRUE(thread_sorted.contains({pid, tid})) << e;
  }
  EXPECT_EQ(thread_names.size(), used.size()) << "threads only for the streams a rank uses";
  EXPECT_EQ(thread_names.at({1, static_cast<int>(SimStream::kPpSend) + 1}), "pp send");
  EXPECT_EQ(thread_names.at({2, static_cast<int>(SimStream::kPpRecv) + 1}), "pp recv");
  EXPECT_FALSE(thread_names.contains({1, static_cast<int>(SimStream::kDpReduce) + 1}));
}

TEST(TraceJson, FlowsPairUpInsideTheirSlices) {
  const Timeline t = TwoStages();
  const json trace = TimelineToChromeTrace(t, Info());
  std::map<int64_t, json> starts, ends;
  for (const json& e : WithPh(trace, "s")) starts[e.at("id").get<int64_t>()] = e;
  for (const json& e : WithPh(trace, "f")) ends[e.at("id").get<int64_t>()] = e;
  ASSERT_EQ(starts.size(), t.flows.size());
  ASSERT_EQ(ends.size(), t.flows.size());
  for (const auto& [id, s] : starts) {
    ASSERT_TRUE(ends.contains(id)) << s;
    const json& f = ends.at(id);
    EXPECT_EQ(s.at("cat"), f.at("cat"));
    EXPECT_EQ(s.at("name"), f.at("name"));
    EXPECT_EQ(f.at("bp"), "e");
    EXPECT_FALSE(s.contains("bp"));
    const json from = EnclosingSlice(trace, s.at("pid"), s.at("tid"), s.at("ts"));
    const json to = EnclosingSlice(trace, f.at("pid"), f.at("tid"), f.at("ts"));
    ASSERT_FALSE(from.is_null()) << s;
    ASSERT_FALSE(to.is_null()) << f;
    EXPECT_EQ(from.at("cat"), "pp send");
    EXPECT_EQ(to.at("cat"), "pp recv");
    EXPECT_NE(s.at("pid"), f.at("pid")) << "a transfer between stages";
  }
  // The first flow: stage 0's send (pid 1) to stage 1's receive (pid 2), both 10-12 ms.
  const json& s1 = starts.at(1);
  EXPECT_EQ(s1.at("pid"), 1);
  EXPECT_EQ(ends.at(1).at("pid"), 2);
  EXPECT_GT(s1.at("ts").get<double>(), 10000);
  EXPECT_LT(s1.at("ts").get<double>(), 12000);
}

TEST(TraceJson, CountersCarryGigabytes) {
  const json trace = TimelineToChromeTrace(TwoStages(), Info());
  const std::vector<json> counters = WithPh(trace, "C");
  ASSERT_EQ(counters.size(), 3u);
  for (const json& c : counters) {
    EXPECT_EQ(c.at("name"), "activation memory");
    EXPECT_EQ(c.at("tid"), 1) << "on the compute thread";
    EXPECT_TRUE(c.at("args").at("GB").is_number()) << c;
  }
  EXPECT_EQ(counters[0].at("pid"), 1);
  EXPECT_EQ(counters[0].at("ts"), 0);
  EXPECT_EQ(counters[0].at("args").at("GB"), 0);
  EXPECT_EQ(counters[1].at("pid"), 1);
  EXPECT_NEAR(counters[1].at("ts").get<double>(), 10000, 1e-6);
  EXPECT_NEAR(counters[1].at("args").at("GB").get<double>(), 1.5, 1e-12);
  EXPECT_EQ(counters[2].at("pid"), 2);
  EXPECT_NEAR(counters[2].at("args").at("GB").get<double>(), 2.0, 1e-12);
}

TEST(TraceJson, CounterThreadIsNamedWithoutComputeOps) {
  Timeline t;
  t.ranks = {{"stage 0", 0, 0, 1}};
  t.ops = {Op(0, SimStream::kDpReduce, "reduce-scatter", 0, 0.001)};
  t.activation_memory = {{0, 0.0, 1e9}};
  const json trace = TimelineToChromeTrace(t, Info());
  std::set<int> named;
  for (const json& e : WithPh(trace, "M")) {
    if (e.at("name") == "thread_name") named.insert(e.at("tid").get<int>());
  }
  EXPECT_EQ(named, (std::set<int>{1, static_cast<int>(SimStream::kDpReduce) + 1}));
}

TEST(TraceJson, InvalidEntriesAreLeftOut) {
  Timeline t = TwoStages();
  t.ops.push_back(Op(5, SimStream::kCompute, "forward", 0, 1));  // no rank 5
  t.ops.push_back(Op(0, SimStream::kCompute, "forward", 0.1, std::nan("")));
  t.flows.push_back({0, 999});
  t.activation_memory.push_back({-1, 0, 1e9});
  const json trace = TimelineToChromeTrace(t, Info());
  EXPECT_EQ(WithPh(trace, "X").size(), t.ops.size() - 2);
  EXPECT_EQ(WithPh(trace, "s").size(), t.flows.size() - 1);
  EXPECT_EQ(WithPh(trace, "C").size(), t.activation_memory.size() - 1);
  EXPECT_EQ(trace.dump().find("null"), std::string::npos);
}

TEST(TraceJson, EmptyTimeline) {
  const json trace = TimelineToChromeTrace(Timeline{}, TraceInfo{});
  EXPECT_TRUE(Events(trace).is_array());
  EXPECT_TRUE(Events(trace).empty());
  EXPECT_EQ(trace.at("otherData").at("title"), "");
}

TEST(TraceJson, WriteRoundTrips) {
  TempDir tmp("gpuplan_trace_");
  const Timeline t = TwoStages();
  const std::string path = (tmp.path() / "trace.json").string();
  const Status st = WriteChromeTrace(path, t, Info());
  ASSERT_TRUE(st.ok()) << st.message();
  std::stringstream text;
  text << std::ifstream(path).rdbuf();
  const json parsed = json::parse(text.str(), nullptr, false);
  ASSERT_FALSE(parsed.is_discarded());
  EXPECT_EQ(parsed, TimelineToChromeTrace(t, Info()));
  // Only the file: the temporary one was renamed into place.
  EXPECT_EQ(std::distance(fs::directory_iterator(tmp.path()), fs::directory_iterator()), 1);
  // Writing again replaces it.
  ASSERT_TRUE(WriteChromeTrace(path, Timeline{}, TraceInfo{}).ok());
  std::stringstream again;
  again << std::ifstream(path).rdbuf();
  EXPECT_TRUE(json::parse(again.str()).at("traceEvents").empty());
}

TEST(TraceJson, WriteIntoAMissingDirectoryFails) {
  TempDir tmp("gpuplan_trace_");
  const std::string path = (tmp.path() / "missing" / "trace.json").string();
  const Status st = WriteChromeTrace(path, TwoStages(), Info());
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.kind(), ErrorKind::kUnavailable);
  EXPECT_NE(st.message().find(path), std::string::npos) << st.message();
  EXPECT_EQ(std::distance(fs::directory_iterator(tmp.path()), fs::directory_iterator()), 0);
}

TEST(TraceJson, WriteOverADirectoryFailsWithoutLeftovers) {
  TempDir tmp("gpuplan_trace_");
  const fs::path dir = tmp.path() / "trace.json";
  fs::create_directories(dir / "inside");  // a non-empty directory where the file must go
  const Status st = WriteChromeTrace(dir.string(), TwoStages(), Info());
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find(dir.string()), std::string::npos) << st.message();
  for (const auto& entry : fs::directory_iterator(tmp.path())) {
    EXPECT_EQ(entry.path().filename(), "trace.json") << entry.path();
  }
}

// 100k ops on 8 ranks with flows and counters: converting and writing stays well under 0.5 s
// in a release build; the bound here is loose so that debug and sanitizer builds pass.
TEST(TraceJson, LargeTimelineIsFast) {
  Timeline t;
  constexpr int kRanks = 8, kOpsPerRank = 12500;
  static constexpr std::string_view kNames[] = {"forward", "backward", "wgrad", "all-reduce"};
  for (int r = 0; r < kRanks; ++r) {
    t.ranks.push_back({"stage " + std::to_string(r), r * 8, r, 8});
    for (int i = 0; i < kOpsPerRank; ++i) {
      const double start = i * 1e-4 + r * 1e-5;
      TimelineOp op = Op(r, static_cast<SimStream>(i % 4 == 3 ? 1 : 0), kNames[i % 4], start,
                         start + 9e-5, i / 4);
      op.layer = i % 80;
      op.flops = 1e12;
      t.ops.push_back(op);
      if (i % 100 == 0) t.activation_memory.push_back({r, start, 1e9 * (i % 7)});
    }
  }
  for (int32_t i = 0; i + kOpsPerRank < static_cast<int32_t>(t.ops.size()); i += 50) {
    t.flows.push_back({i, i + kOpsPerRank});
  }
  TempDir tmp("gpuplan_trace_");
  const std::string path = (tmp.path() / "big.json").string();
  const auto begin = std::chrono::steady_clock::now();
  const Status st = WriteChromeTrace(path, t, Info());
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  ASSERT_TRUE(st.ok()) << st.message();
  RecordProperty("write_seconds", std::to_string(seconds));
  std::printf("WriteChromeTrace: %zu ops, %zu flows, %zu samples, %.1f MB in %.3f s\n",
              t.ops.size(), t.flows.size(), t.activation_memory.size(),
              static_cast<double>(fs::file_size(path)) / 1e6, seconds);
  EXPECT_LT(seconds, 5.0);

  const auto begin_json = std::chrono::steady_clock::now();
  const json trace = TimelineToChromeTrace(t, Info());
  const double json_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - begin_json).count();
  std::printf("TimelineToChromeTrace: %zu events in %.3f s\n", Events(trace).size(), json_seconds);
  EXPECT_EQ(std::count_if(Events(trace).begin(), Events(trace).end(),
                          [](const json& e) { return e.at("ph") == "X"; }),
            static_cast<std::ptrdiff_t>(t.ops.size()));
}

}  // namespace
}  // namespace gpuplan
