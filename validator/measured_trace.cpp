#include "validator/measured_trace.h"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <tuple>
#include <vector>

#include "common/str_format.h"

namespace gpuplan {
namespace {

// stream, start, end, micro-batch, chunk, layer, bytes, peer, tag, name
constexpr int kFields = 10;

}  // namespace

SimStream MeasuredStream(const RankOp& op) {
  switch (op.kind) {
    case RankOpKind::kSend:
      return SimStream::kPpSend;
    case RankOpKind::kRecv:
      return SimStream::kPpRecv;
    case RankOpKind::kCollective:
      switch (op.group) {
        case GroupKind::kTp:
        case GroupKind::kExpertTp:
          return SimStream::kTp;
        case GroupKind::kCp:
          return SimStream::kCp;
        case GroupKind::kEp:
          return SimStream::kEp;
        case GroupKind::kPp:
          return SimStream::kPpSend;
        default:  // dp, expert-dp
          return op.name.rfind("all_gather", 0) == 0 ? SimStream::kDpGather : SimStream::kDpReduce;
      }
    default:
      return SimStream::kCompute;
  }
}

std::string SerializeMeasuredOps(const std::vector<MeasuredOp>& ops) {
  std::string out;
  for (const MeasuredOp& op : ops) {
    std::string name = op.name;
    std::replace_if(
        name.begin(), name.end(), [](char c) { return c == '\t' || c == '\n'; }, ' ');
    out += StrFormat("%d\t%.9f\t%.9f\t%d\t%d\t%d\t%.17g\t%d\t%d\t%s\n", static_cast<int>(op.stream),
                     op.start_s, op.end_s, op.microbatch, op.chunk, op.layer, op.bytes, op.peer,
                     op.tag, name.c_str());
  }
  return out;
}

Expected<std::vector<MeasuredOp>> ParseMeasuredOps(std::string_view text) {
  std::vector<MeasuredOp> ops;
  int64_t line_no = 0;
  while (!text.empty()) {
    ++line_no;
    const size_t end = text.find('\n');
    const std::string line(text.substr(0, end));
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
    MeasuredOp op;
    int stream = -1, name_at = 0;
    const int got = std::sscanf(line.c_str(), "%d\t%lf\t%lf\t%d\t%d\t%d\t%lf\t%d\t%d\t%n", &stream,
                                &op.start_s, &op.end_s, &op.microbatch, &op.chunk, &op.layer,
                                &op.bytes, &op.peer, &op.tag, &name_at);
    if (got != kFields - 1 || name_at == 0 || stream < 0 || stream >= kSimStreamCount ||
        !std::isfinite(op.start_s) || !std::isfinite(op.end_s) || !std::isfinite(op.bytes)) {
      return Status::Invalid(StrFormat("measured ops, line %" PRId64
                                       ": '%s' is not 'stream, start, end, micro-batch, "
                                       "chunk, layer, bytes, peer, tag, name' (tabs)",
                                       line_no, line.c_str()));
    }
    op.stream = static_cast<SimStream>(stream);
    op.name = line.substr(static_cast<size_t>(name_at));
    ops.push_back(std::move(op));
  }
  return ops;
}

Timeline ComparisonTimeline(const RankLayout& layout,
                            const std::vector<std::vector<MeasuredOp>>& measured,
                            const Timeline& simulated) {
  Timeline tl;
  // The measured sends and receives by (sender, receiver, tag), in the order each rank ran them:
  // MPI and NCCL match messages of one pair and tag in that order (tags repeat past 128
  // micro-batches).
  using Message = std::tuple<int32_t, int32_t, int32_t>;
  std::map<Message, std::vector<int32_t>> sends, receives;
  for (size_t r = 0; r < measured.size(); ++r) {
    TimelineRank rank;
    rank.global_rank = static_cast<int64_t>(r);
    rank.stage = r < layout.ranks.size() ? layout.ranks[r].pp : 0;
    rank.name = StrFormat("measured rank %zu (stage %lld)", r, static_cast<long long>(rank.stage));
    tl.ranks.push_back(std::move(rank));
    for (const MeasuredOp& m : measured[r]) {
      TimelineOp op;
      op.rank = static_cast<int32_t>(r);
      op.stream = m.stream;
      op.name = m.name;
      op.start_s = m.start_s;
      op.end_s = m.end_s;
      op.microbatch = m.microbatch;
      op.chunk = m.chunk;
      op.layer = m.layer;
      op.bytes = m.bytes;
      const int32_t index = static_cast<int32_t>(tl.ops.size());
      if (m.peer >= 0 && m.stream == SimStream::kPpSend) {
        sends[{op.rank, m.peer, m.tag}].push_back(index);
      } else if (m.peer >= 0 && m.stream == SimStream::kPpRecv) {
        receives[{m.peer, op.rank, m.tag}].push_back(index);
      }
      tl.ops.push_back(op);
    }
  }
  for (const auto& [message, received] : receives) {
    const auto sent = sends.find(message);
    if (sent == sends.end()) continue;
    for (size_t k = 0; k < std::min(received.size(), sent->second.size()); ++k) {
      tl.flows.push_back({sent->second[k], received[k]});
    }
  }
  const int32_t rank_offset = static_cast<int32_t>(tl.ranks.size());
  const int32_t op_offset = static_cast<int32_t>(tl.ops.size());
  for (TimelineRank rank : simulated.ranks) {
    rank.name = "simulated " + rank.name;
    tl.ranks.push_back(std::move(rank));
  }
  for (TimelineOp op : simulated.ops) {
    op.rank += rank_offset;
    tl.ops.push_back(op);
  }
  for (TimelineFlow flow : simulated.flows) {
    flow.from += op_offset;
    flow.to += op_offset;
    tl.flows.push_back(flow);
  }
  for (CounterSample sample : simulated.activation_memory) {
    sample.rank += rank_offset;
    tl.activation_memory.push_back(sample);
  }
  return tl;
}

}  // namespace gpuplan
