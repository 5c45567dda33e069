#include "profiler/nccl_collective_runner.h"

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/str_format.h"
#include "profiler/cuda_check.h"
#include "profiler/cuda_resources.h"
#include "profiler/cuda_timing.h"
#include "profiler/library_versions.h"
#include "profiler/nccl_check.h"

namespace gpuplan {
namespace {

constexpr size_t kElementBytes = 2;  // ncclBfloat16
constexpr ncclDataType_t kElementType = ncclBfloat16;

// What one rank passes to NCCL for one collective.
struct RankCall {
  const char* send;
  char* recv;
  size_t count;  // elements in the NCCL call: per-peer block for the split collectives
  int rank;
  int ranks;
  ncclComm_t comm;
  cudaStream_t stream;
};

// One collective as nccl-tests runs it (src/<collective>.cu: *GetCollByteCount and *RunColl).
// `split`: the size divides over ranks, so the call count is size / ranks elements; each buffer
// holds one call count, or `ranks` of them where marked per rank.
struct CollectiveOp {
  Collective kind;
  bool split;
  bool send_per_rank;  // send buffer is ranks x count
  bool recv_per_rank;  // receive buffer is ranks x count
  ncclResult_t (*enqueue)(const RankCall& c);
};

ncclResult_t EnqueueAllToAll(const RankCall& c) {
  const size_t block = c.count * kElementBytes;
  for (int peer = 0; peer < c.ranks; ++peer) {
    const size_t offset = static_cast<size_t>(peer) * block;
    ncclResult_t r = ncclSend(c.send + offset, c.count, kElementType, peer, c.comm, c.stream);
    if (r != ncclSuccess) return r;
    r = ncclRecv(c.recv + offset, c.count, kElementType, peer, c.comm, c.stream);
    if (r != ncclSuccess) return r;
  }
  return ncclSuccess;
}

ncclResult_t EnqueueSendRecv(const RankCall& c) {
  const int next = (c.rank + 1) % c.ranks, previous = (c.rank - 1 + c.ranks) % c.ranks;
  const ncclResult_t r = ncclSend(c.send, c.count, kElementType, next, c.comm, c.stream);
  if (r != ncclSuccess) return r;
  return ncclRecv(c.recv, c.count, kElementType, previous, c.comm, c.stream);
}

constexpr CollectiveOp kOps[] = {
    {Collective::kAllReduce, false, false, false,
     [](const RankCall& c) {
       return ncclAllReduce(c.send, c.recv, c.count, kElementType, ncclSum, c.comm, c.stream);
     }},
    {Collective::kAllGather, true, false, true,
     [](const RankCall& c) {
       return ncclAllGather(c.send, c.recv, c.count, kElementType, c.comm, c.stream);
     }},
    {Collective::kReduceScatter, true, true, false,
     [](const RankCall& c) {
       return ncclReduceScatter(c.send, c.recv, c.count, kElementType, ncclSum, c.comm, c.stream);
     }},
    {Collective::kAllToAll, true, true, true, EnqueueAllToAll},
    {Collective::kBroadcast, false, false, false,
     [](const RankCall& c) {
       return ncclBroadcast(c.send, c.recv, c.count, kElementType, /*root=*/0, c.comm, c.stream);
     }},
    {Collective::kSendRecv, false, false, false, EnqueueSendRecv},
};

const CollectiveOp* FindOp(Collective c) {
  for (const CollectiveOp& op : kOps) {
    if (op.kind == c) return &op;
  }
  return nullptr;
}

struct CommDeleter {
  void operator()(ncclComm_t comm) const { ncclCommDestroy(comm); }
};
using NcclComm = std::unique_ptr<ncclComm, CommDeleter>;

// The communicators and streams of one group size: rank r is device r.
struct CommGroup {
  std::vector<CudaStream> streams;
  std::vector<NcclComm> comms;
  std::vector<DeviceStream> timed;  // (device, stream) of every rank, for TimeOnStreams
};

Expected<std::unique_ptr<CommGroup>> MakeGroup(int ranks) {
  auto group = std::make_unique<CommGroup>();
  std::vector<int> devices(static_cast<size_t>(ranks));
  for (int r = 0; r < ranks; ++r) {
    devices[static_cast<size_t>(r)] = r;
    GPUPLAN_CUDA_RETURN_IF_ERROR(cudaSetDevice(r));
    Expected<CudaStream> stream = CreateStream();
    if (!stream.ok()) return stream.status();
    group->timed.push_back({r, stream->get()});
    group->streams.push_back(std::move(*stream));
  }
  std::vector<ncclComm_t> comms(static_cast<size_t>(ranks), nullptr);
  GPUPLAN_NCCL_RETURN_IF_ERROR(ncclCommInitAll(comms.data(), ranks, devices.data()));
  for (ncclComm_t comm : comms) group->comms.emplace_back(comm);
  return group;
}

// One rank's send and receive buffers.
struct RankBuffers {
  DeviceMemory send;
  DeviceMemory recv;
};

class NcclCollectiveRunner : public CollectiveRunner {
 public:
  explicit NcclCollectiveRunner(int device_count) : device_count_(device_count) {}

  int MaxRanks() const override { return device_count_; }
  std::string Version() const override { return NcclVersion(); }
  double ElementBytes() const override { return kElementBytes; }
  bool Runs(Collective) const override { return true; }

  Expected<double> Seconds(Collective c, int ranks, double bytes,
                           const TimingPolicy& timing) override {
    const CollectiveOp* op = FindOp(c);
    if (op == nullptr) {
      return Status::Invalid("no collective " + std::to_string(static_cast<int>(c)));
    }
    const std::string name(GetCollectiveInfo(c).name);
    if (!std::isfinite(bytes) || bytes < 0 || bytes > 1e18) {
      return Status::Invalid(name + ": size must be 0 to 1e18 bytes, got " + std::to_string(bytes));
    }
    const std::string what = name + " of " + std::to_string(static_cast<int64_t>(bytes)) +
                             " bytes over " + std::to_string(ranks) + " " +
                             Noun(ranks, "GPU", "GPUs");
    if (ranks < 1 || ranks > device_count_) {
      return Status::Invalid(what + ": this machine has " + std::to_string(device_count_) + " " +
                             Noun(device_count_, "GPU", "GPUs"));
    }
    const DeviceGuard restore_device;
    Expected<CommGroup*> group = Group(ranks);
    if (!group.ok()) return group.status();

    // nccl-tests "size" -> elements: whole bf16 elements, a multiple of `ranks` with at least
    // one per rank for the split collectives, at least one otherwise.
    const auto elements = static_cast<size_t>(bytes / kElementBytes);
    const size_t n = static_cast<size_t>(ranks);
    const size_t count =
        op->split ? std::max<size_t>(1, elements / n) : std::max<size_t>(1, elements);
    const size_t send_bytes = count * kElementBytes * (op->send_per_rank ? n : 1);
    const size_t recv_bytes = count * kElementBytes * (op->recv_per_rank ? n : 1);

    std::vector<RankBuffers> buffers(n);
    for (int r = 0; r < ranks; ++r) {
      RankBuffers& b = buffers[static_cast<size_t>(r)];
      cudaStream_t stream = (*group)->timed[static_cast<size_t>(r)].stream;
      GPUPLAN_CUDA_RETURN_IF_ERROR(cudaSetDevice(r));
      Expected<DeviceMemory> send = AllocateDevice(send_bytes, what + " send buffer");
      if (!send.ok()) return send.status();
      Expected<DeviceMemory> recv = AllocateDevice(recv_bytes, what + " receive buffer");
      if (!recv.ok()) return recv.status();
      b.send = std::move(*send);
      b.recv = std::move(*recv);
      GPUPLAN_CUDA_RETURN_IF_ERROR(cudaMemsetAsync(b.send.get(), 0, send_bytes, stream));
    }
    const CommGroup& g = **group;
    return TimeOnStreams(g.timed, timing, [&]() { return EnqueueGroup(*op, g, buffers, count); });
  }

 private:
  // Every rank's call of `op` in one group (nccl-tests startColl with -g).
  static Status EnqueueGroup(const CollectiveOp& op, const CommGroup& g,
                             const std::vector<RankBuffers>& buffers, size_t count) {
    GPUPLAN_NCCL_RETURN_IF_ERROR(ncclGroupStart());
    const int ranks = static_cast<int>(g.comms.size());
    ncclResult_t result = ncclSuccess;
    for (int r = 0; r < ranks && result == ncclSuccess; ++r) {
      const auto i = static_cast<size_t>(r);
      result = op.enqueue({static_cast<const char*>(buffers[i].send.get()),
                           static_cast<char*>(buffers[i].recv.get()), count, r, ranks,
                           g.comms[i].get(), g.timed[i].stream});
    }
    const ncclResult_t ended = ncclGroupEnd();  // always close the group, even after a failure
    GPUPLAN_RETURN_IF_ERROR(NcclStatus(result, "NCCL collective enqueue", __FILE__, __LINE__));
    return NcclStatus(ended, "ncclGroupEnd", __FILE__, __LINE__);
  }

  // The communicators of the first `ranks` devices, created on first use.
  Expected<CommGroup*> Group(int ranks) {
    auto found = groups_.find(ranks);
    if (found != groups_.end()) return found->second.get();
    Expected<std::unique_ptr<CommGroup>> made = MakeGroup(ranks);
    if (!made.ok()) return made.status();
    CommGroup* group = made->get();
    groups_.emplace(ranks, std::move(*made));
    return group;
  }

  int device_count_;
  std::map<int, std::unique_ptr<CommGroup>> groups_;
};

}  // namespace

Expected<std::unique_ptr<CollectiveRunner>> MakeNcclCollectiveRunner() {
  int count = 0;
  GPUPLAN_CUDA_RETURN_IF_ERROR(cudaGetDeviceCount(&count));
  if (count < 1) return Status::Unavailable("NCCL runner: no CUDA GPU found");
  return std::unique_ptr<CollectiveRunner>(std::make_unique<NcclCollectiveRunner>(count));
}

}  // namespace gpuplan
