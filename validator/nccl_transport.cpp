#include "validator/nccl_transport.h"

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "common/str_format.h"
#include "profiler/cuda_check.h"
#include "profiler/cuda_resources.h"
#include "profiler/nccl_check.h"
#include "validator/local_device.h"
#include "validator/mpi_check.h"
#include "validator/nccl_check_kernels.h"

namespace gpuplan {
namespace {

constexpr int kDirections = 2;  // activation, gradient
// Between two polls of a stream under a watchdog.
constexpr auto kPollInterval = std::chrono::microseconds(20);

const char* DirectionName(int direction) { return direction == 0 ? "activation" : "gradient"; }

// The stages a link of `direction` joins: {sender, receiver}.
std::pair<int64_t, int64_t> LinkStages(int direction, int64_t s, int64_t pp) {
  const int64_t next = (s + 1) % pp;
  return direction == 0 ? std::pair{s, next} : std::pair{next, s};
}

// What rank 0 of a group broadcasts: whether ncclGetUniqueId worked, and the id.
struct IdMessage {
  int result = ncclSuccess;
  ncclUniqueId id = {};
};

size_t Bytes(int64_t elements) { return static_cast<size_t>(elements) * sizeof(int64_t); }

}  // namespace

struct NcclTransport::Buffer {
  DeviceMemory memory;
  int64_t capacity = 0;  // elements

  int64_t* data() const { return static_cast<int64_t*>(memory.get()); }
  // At least `elements`; the old contents are not kept.
  Status Reserve(int64_t elements, const char* what) {
    if (elements <= capacity) return Status::Ok();
    memory.reset();
    capacity = 0;
    Expected<DeviceMemory> m = AllocateDevice(Bytes(elements), what);
    if (!m.ok()) return m.status();
    memory = std::move(*m);
    capacity = elements;
    return Status::Ok();
  }
};

struct NcclTransport::Channel {
  ncclComm_t comm = nullptr;  // null once aborted
  std::string name;           // "dp communicator", "activation link stage 0 -> 1"
  int rank = 0;               // in the communicator
  int size = 1;
  CudaStream stream;
  Buffer send;
  Buffer recv;
  DeviceMemory wrong;         // one int64: the count kernel's counter
  PinnedMemory host;          // one int64: the counter, copied back
  std::vector<Buffer> sends;  // links: buffers of sends not yet finished

  int64_t* Wrong() const { return static_cast<int64_t*>(wrong.get()); }
  int64_t HostWrong() const { return *static_cast<const int64_t*>(host.get()); }
};

Expected<int> LocalDevice(MPI_Comm world) {
  int rank = 0;
  GPUPLAN_MPI_RETURN_IF_ERROR(MPI_Comm_rank(world, &rank));
  MPI_Comm node = MPI_COMM_NULL;
  GPUPLAN_MPI_RETURN_IF_ERROR(
      MPI_Comm_split_type(world, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node));
  int local_rank = 0;
  int local_size = 0;
  int gpus = 0;
  const cudaError_t err = cudaGetDeviceCount(&gpus);
  if (err != cudaSuccess) {
    cudaGetLastError();  // clear it
    gpus = 0;
  }
  // Each rank's first visible GPU by PCI bus id, gathered over the node: the same for ranks that
  // share the node's GPUs, different for ranks given GPUs of their own (ChooseLocalDevice).
  constexpr int kBusIdChars = 32;
  char bus_id[kBusIdChars] = {};
  if (gpus > 0 && cudaDeviceGetPCIBusId(bus_id, kBusIdChars, 0) != cudaSuccess) {
    cudaGetLastError();
    bus_id[0] = '\0';
  }
  int result = MPI_Comm_rank(node, &local_rank);
  if (result == MPI_SUCCESS) result = MPI_Comm_size(node, &local_size);
  std::vector<char> all;
  if (result == MPI_SUCCESS) {
    all.resize(static_cast<size_t>(local_size) * kBusIdChars);
    result = MPI_Allgather(bus_id, kBusIdChars, MPI_CHAR, all.data(), kBusIdChars, MPI_CHAR, node);
  }
  MPI_Comm_free(&node);
  GPUPLAN_MPI_RETURN_IF_ERROR(result);
  if (err != cudaSuccess) {
    return Status::Unavailable(std::string("no CUDA GPU: cudaGetDeviceCount: ") +
                               cudaGetErrorString(err));
  }
  std::vector<std::string> first_gpus;
  for (int r = 0; r < local_size; ++r) {
    const char* id = all.data() + static_cast<size_t>(r) * kBusIdChars;
    first_gpus.emplace_back(id, strnlen(id, kBusIdChars));
  }
  return ChooseLocalDevice(local_rank, local_size, gpus, first_gpus);
}

NcclTransport::NcclTransport() = default;

NcclTransport::~NcclTransport() {
  // Sends never finished may wait for receivers that will not come: abort rather than destroy.
  bool abort = failed_;
  for (const std::unique_ptr<Channel>& link : links_) {
    if (link != nullptr && !link->sends.empty()) abort = true;
  }
  // The reverse of the creation order, the same on every rank.
  auto release = [&](std::unique_ptr<Channel>& c) {
    if (c == nullptr || c->comm == nullptr) return;
    if (abort) {
      ncclCommAbort(c->comm);
    } else {
      ncclCommDestroy(c->comm);
    }
    c->comm = nullptr;
  };
  for (auto it = links_.rbegin(); it != links_.rend(); ++it) release(*it);
  for (auto it = groups_.rbegin(); it != groups_.rend(); ++it) release(*it);
}

Expected<std::unique_ptr<NcclTransport>> NcclTransport::Create(const PlanCommunicators& mpi,
                                                               MPI_Comm world, int device) {
  int world_rank = 0;
  GPUPLAN_MPI_RETURN_IF_ERROR(MPI_Comm_rank(world, &world_rank));
  GPUPLAN_CUDA_RETURN_IF_ERROR(cudaSetDevice(device));
  std::unique_ptr<NcclTransport> t(new NcclTransport());
  t->failed_ = true;  // until every communicator is made: a partial one is aborted
  t->coord_ = mpi.Coord();
  for (int k = 0; k < kGroupKindCount; ++k) {
    t->members_[static_cast<size_t>(k)] = mpi.Members(static_cast<GroupKind>(k));
  }
  t->pp_ = static_cast<int64_t>(t->Members(GroupKind::kPp).size());

  // A channel named `name` with its stream and counter; its communicator is set after.
  auto make_channel = [](std::string name) -> Expected<std::unique_ptr<Channel>> {
    auto c = std::make_unique<Channel>();
    c->name = std::move(name);
    Expected<CudaStream> stream = CreateStream();
    if (!stream.ok()) return stream.status();
    c->stream = std::move(*stream);
    Expected<DeviceMemory> wrong = AllocateDevice(sizeof(int64_t), "the wrong-element counter");
    if (!wrong.ok()) return wrong.status();
    c->wrong = std::move(*wrong);
    Expected<PinnedMemory> host = AllocatePinned(sizeof(int64_t), "the wrong-element counter");
    if (!host.ok()) return host.status();
    c->host = std::move(*host);
    return c;
  };

  for (int k = 0; k < kGroupKindCount; ++k) {
    const GroupKind kind = static_cast<GroupKind>(k);
    const MPI_Comm comm = mpi.Get(kind);
    int rank = 0;
    int size = 0;
    GPUPLAN_MPI_RETURN_IF_ERROR(MPI_Comm_rank(comm, &rank));
    GPUPLAN_MPI_RETURN_IF_ERROR(MPI_Comm_size(comm, &size));
    // Every member learns whether rank 0 got an id, so that none waits on an id never made.
    IdMessage message;
    if (rank == 0) message.result = ncclGetUniqueId(&message.id);
    GPUPLAN_MPI_RETURN_IF_ERROR(
        MPI_Bcast(&message, static_cast<int>(sizeof(message)), MPI_BYTE, 0, comm));
    if (message.result != ncclSuccess) {
      return Status::Unavailable(
          StrFormat("rank %d: ncclGetUniqueId failed on rank 0 of the %s group: %s", world_rank,
                    std::string(GroupKindName(kind)).c_str(),
                    ncclGetErrorString(static_cast<ncclResult_t>(message.result))));
    }
    Expected<std::unique_ptr<Channel>> c =
        make_channel(std::string(GroupKindName(kind)) + " communicator");
    if (!c.ok()) return c.status();
    (*c)->rank = rank;
    (*c)->size = size;
    GPUPLAN_NCCL_RETURN_IF_ERROR(ncclCommInitRank(&(*c)->comm, size, message.id, rank));
    t->groups_[static_cast<size_t>(k)] = std::move(*c);
  }

  // The pipeline links: every pp member takes part in every split, in the same order.
  const int64_t pp = t->pp_;
  const int64_t stage = t->coord_.pp;
  if (pp > 1) {
    t->links_.resize(static_cast<size_t>(kDirections * pp));
    const ncclComm_t pp_comm = t->groups_[static_cast<size_t>(GroupKind::kPp)]->comm;
    for (int d = 0; d < kDirections; ++d) {
      for (int64_t s = 0; s < pp; ++s) {
        const auto [sender, receiver] = LinkStages(d, s, pp);
        const bool member = stage == sender || stage == receiver;
        const int key = stage == sender ? 0 : 1;
        ncclComm_t link = nullptr;
        GPUPLAN_NCCL_RETURN_IF_ERROR(
            ncclCommSplit(pp_comm, member ? 0 : NCCL_SPLIT_NOCOLOR, key, &link, nullptr));
        if (!member) continue;
        Expected<std::unique_ptr<Channel>> c = make_channel(
            StrFormat("%s link stage %lld -> %lld", DirectionName(d),
                      static_cast<long long>(sender), static_cast<long long>(receiver)));
        if (!c.ok()) {
          ncclCommAbort(link);
          return c.status();
        }
        (*c)->comm = link;
        (*c)->rank = key;
        (*c)->size = 2;
        t->links_[static_cast<size_t>(d * pp + s)] = std::move(*c);
      }
    }
    // Each link carries one checked element now, in the order the links were made: NCCL connects
    // a point-to-point pair on its first transfer, with a handshake the host may wait on, so a
    // link's first use must not depend on the step's order (stage 0 sending an activation while
    // stage 1 sends a gradient would wait on two different handshakes).
    for (int d = 0; d < kDirections; ++d) {
      for (int64_t s = 0; s < pp; ++s) {
        Channel* c = t->links_[static_cast<size_t>(d * pp + s)].get();
        if (c == nullptr) continue;
        const int64_t sender =
            t->Members(GroupKind::kPp)[static_cast<size_t>(LinkStages(d, s, pp).first)];
        const CheckSpec spec{CheckPattern::kMessage, c->rank, 2, 1, /*tag=*/0, sender};
        const Watchdog watchdog{kDefaultWatchdogSeconds, "connecting the " + c->name};
        cudaStream_t stream = c->stream.get();
        GPUPLAN_RETURN_IF_ERROR(c->send.Reserve(1, "a pipeline link's first message"));
        GPUPLAN_RETURN_IF_ERROR(c->recv.Reserve(1, "a pipeline link's first message"));
        if (c->rank == 0) {
          GPUPLAN_RETURN_IF_ERROR(FillCheckSend(c->send.data(), 1, spec, stream));
          GPUPLAN_NCCL_RETURN_IF_ERROR(ncclSend(c->send.data(), 1, ncclInt64, 1, c->comm, stream));
          GPUPLAN_RETURN_IF_ERROR(t->Wait({c}, watchdog));
          continue;
        }
        GPUPLAN_CUDA_RETURN_IF_ERROR(
            cudaMemsetAsync(c->recv.data(), 0xFF, sizeof(int64_t), stream));
        GPUPLAN_NCCL_RETURN_IF_ERROR(ncclRecv(c->recv.data(), 1, ncclInt64, 0, c->comm, stream));
        Expected<CollectiveCheck> first = t->CheckAndWait(*c, c->recv.data(), 1, spec, watchdog);
        if (!first.ok()) return first.status();
        if (first->wrong != 0) {
          return Status::Internal(
              StrFormat("rank %d: the %s delivered a wrong element from rank %lld", world_rank,
                        c->name.c_str(), static_cast<long long>(sender)));
        }
      }
    }
  }
  t->failed_ = false;
  return t;
}

Expected<NcclTransport::Channel*> NcclTransport::Link(int64_t sender, int64_t receiver, int tag) {
  const int direction = (tag & kGradientTagBit) != 0 ? 1 : 0;
  const std::vector<int64_t>& stages = Members(GroupKind::kPp);
  auto stage_of = [&](int64_t rank) -> int64_t {
    const auto it = std::find(stages.begin(), stages.end(), rank);
    return it == stages.end() ? -1 : static_cast<int64_t>(it - stages.begin());
  };
  const int64_t from = stage_of(sender);
  const int64_t to = stage_of(receiver);
  if (from >= 0 && to >= 0 && pp_ > 1) {
    // Activation link s: s -> s + 1; gradient link s: s + 1 -> s.
    const int64_t s = direction == 0 ? from : to;
    if (LinkStages(direction, s, pp_) == std::pair{from, to}) {
      Channel* link = links_[static_cast<size_t>(direction * pp_ + s)].get();
      if (link == nullptr)
        return Status::Internal("rank " + std::to_string(coord_.rank) + ": no " +
                                DirectionName(direction) + " link");
      if (link->comm == nullptr) {
        return Status::Unavailable(
            StrFormat("rank %lld: the %s was aborted after an earlier failure",
                      static_cast<long long>(coord_.rank), link->name.c_str()));
      }
      return link;
    }
  }
  return Status::Invalid(StrFormat(
      "rank %lld: no pipeline link carries %s messages (tag %d) from rank %lld to rank %lld: they "
      "are not neighbouring stages of this rank's pp group",
      static_cast<long long>(coord_.rank), DirectionName(direction), tag,
      static_cast<long long>(sender), static_cast<long long>(receiver)));
}

void NcclTransport::Abort(const std::vector<Channel*>& channels) {
  failed_ = true;
  for (Channel* c : channels) {
    if (c->comm != nullptr) ncclCommAbort(c->comm);
    c->comm = nullptr;
  }
}

Status NcclTransport::Wait(const std::vector<Channel*>& channels, const Watchdog& watchdog) {
  for (const Channel* c : channels) {
    if (c->comm == nullptr) {
      return Status::Unavailable(
          StrFormat("rank %lld: %s: the %s was aborted after an earlier "
                    "failure",
                    static_cast<long long>(coord_.rank), watchdog.what.c_str(), c->name.c_str()));
    }
  }
  const auto start = std::chrono::steady_clock::now();
  for (;;) {
    bool done = true;
    for (Channel* c : channels) {
      const cudaError_t err = cudaStreamQuery(c->stream.get());
      if (err == cudaErrorNotReady) {
        done = false;
      } else if (err != cudaSuccess) {
        Abort(channels);
        return CudaStatus(err, "cudaStreamQuery", __FILE__, __LINE__)
            .WithPrefix(StrFormat("rank %lld: %s", static_cast<long long>(coord_.rank),
                                  watchdog.what.c_str()));
      }
    }
    for (Channel* c : channels) {
      ncclResult_t async = ncclSuccess;
      const ncclResult_t result = ncclCommGetAsyncError(c->comm, &async);
      if (result != ncclSuccess) async = result;
      if (async != ncclSuccess && async != ncclInProgress) {
        Abort(channels);
        return Status::Unavailable(StrFormat(
            "rank %lld: %s failed on the %s: NCCL reports %s", static_cast<long long>(coord_.rank),
            watchdog.what.c_str(), c->name.c_str(), ncclGetErrorString(async)));
      }
    }
    if (done) return Status::Ok();
    const std::chrono::duration<double> waited = std::chrono::steady_clock::now() - start;
    if (waited.count() > watchdog.timeout_s) {
      Abort(channels);
      return WatchdogExpired(coord_.rank, watchdog);
    }
    std::this_thread::sleep_for(kPollInterval);
  }
}

void NcclTransport::NoteFailure(const Status& status) {
  if (!status.ok() && status.kind() != ErrorKind::kInvalidInput) failed_ = true;
}

Expected<CollectiveCheck> NcclTransport::Collective(CollectiveKind kind, GroupKind group,
                                                    int64_t count, const Watchdog& watchdog) {
  Expected<CollectiveCheck> check = RunCollective(kind, group, count, watchdog);
  NoteFailure(check.status());
  return check;
}

Status NcclTransport::Send(int64_t peer, int tag, int64_t count) {
  Status status = StartSend(peer, tag, count);
  NoteFailure(status);
  return status;
}

Expected<CollectiveCheck> NcclTransport::Receive(int64_t peer, int tag, int64_t count,
                                                 const Watchdog& watchdog) {
  Expected<CollectiveCheck> check = RunReceive(peer, tag, count, watchdog);
  NoteFailure(check.status());
  return check;
}

Expected<CollectiveCheck> NcclTransport::RunCollective(CollectiveKind kind, GroupKind group,
                                                       int64_t count, const Watchdog& watchdog) {
  if (count < 1) {
    return Status::Invalid(StrFormat("%s: %lld elements (at least 1)", watchdog.what.c_str(),
                                     static_cast<long long>(count)));
  }
  Channel& c = *groups_[static_cast<size_t>(group)];
  if (c.comm == nullptr) {
    return Status::Unavailable(StrFormat("rank %lld: the %s was aborted after an earlier failure",
                                         static_cast<long long>(coord_.rank), c.name.c_str()));
  }
  const int64_t n = c.size;
  const int64_t r = c.rank;
  CheckSpec spec{CheckPattern::kAllReduce, r, n, count, 0, 0};
  int64_t send_elements = count;
  int64_t recv_elements = count;
  switch (kind) {
    case CollectiveKind::kAllReduce:
      break;
    case CollectiveKind::kAllGather:
      spec.pattern = CheckPattern::kAllGather;
      recv_elements = n * count;
      break;
    case CollectiveKind::kReduceScatter:
      spec.pattern = CheckPattern::kReduceScatter;
      send_elements = n * count;
      break;
    case CollectiveKind::kAllToAll:
      spec.pattern = CheckPattern::kAllToAll;
      send_elements = n * count;
      recv_elements = n * count;
      break;
    case CollectiveKind::kRing:
      spec.pattern = CheckPattern::kRing;
      spec.sender = (r + n - 1) % n;
      break;
  }
  GPUPLAN_RETURN_IF_ERROR(c.send.Reserve(send_elements, "a collective's send buffer"));
  GPUPLAN_RETURN_IF_ERROR(c.recv.Reserve(recv_elements, "a collective's receive buffer"));
  cudaStream_t stream = c.stream.get();
  int64_t* send = c.send.data();
  int64_t* recv = c.recv.data();
  const size_t block = static_cast<size_t>(count);
  GPUPLAN_CUDA_RETURN_IF_ERROR(cudaMemsetAsync(recv, 0xFF, Bytes(recv_elements), stream));
  GPUPLAN_RETURN_IF_ERROR(FillCheckSend(send, send_elements, spec, stream));
  switch (kind) {
    case CollectiveKind::kAllReduce:
      GPUPLAN_NCCL_RETURN_IF_ERROR(
          ncclAllReduce(send, recv, block, ncclInt64, ncclSum, c.comm, stream));
      break;
    case CollectiveKind::kAllGather:
      GPUPLAN_NCCL_RETURN_IF_ERROR(ncclAllGather(send, recv, block, ncclInt64, c.comm, stream));
      break;
    case CollectiveKind::kReduceScatter:
      GPUPLAN_NCCL_RETURN_IF_ERROR(
          ncclReduceScatter(send, recv, block, ncclInt64, ncclSum, c.comm, stream));
      break;
    case CollectiveKind::kAllToAll: {
      GPUPLAN_NCCL_RETURN_IF_ERROR(ncclGroupStart());
      ncclResult_t result = ncclSuccess;
      for (int64_t p = 0; p < n && result == ncclSuccess; ++p) {
        const int peer = static_cast<int>(p);
        result = ncclSend(send + p * count, block, ncclInt64, peer, c.comm, stream);
        if (result == ncclSuccess) {
          result = ncclRecv(recv + p * count, block, ncclInt64, peer, c.comm, stream);
        }
      }
      const ncclResult_t end = ncclGroupEnd();  // closes the group whatever happened in it
      GPUPLAN_NCCL_RETURN_IF_ERROR(result);
      GPUPLAN_NCCL_RETURN_IF_ERROR(end);
      break;
    }
    case CollectiveKind::kRing: {
      const int next = static_cast<int>((r + 1) % n);
      const int prev = static_cast<int>(spec.sender);
      GPUPLAN_NCCL_RETURN_IF_ERROR(ncclGroupStart());
      ncclResult_t result = ncclSend(send, block, ncclInt64, next, c.comm, stream);
      if (result == ncclSuccess) result = ncclRecv(recv, block, ncclInt64, prev, c.comm, stream);
      const ncclResult_t end = ncclGroupEnd();
      GPUPLAN_NCCL_RETURN_IF_ERROR(result);
      GPUPLAN_NCCL_RETURN_IF_ERROR(end);
      break;
    }
  }
  return CheckAndWait(c, recv, recv_elements, spec, watchdog);
}

Expected<NcclTransport::Buffer> NcclTransport::TakeSendBuffer(int64_t count) {
  // The smallest free buffer that holds `count`; a new one when none does.
  auto best = free_sends_.end();
  for (auto it = free_sends_.begin(); it != free_sends_.end(); ++it) {
    if (it->capacity >= count && (best == free_sends_.end() || it->capacity < best->capacity)) {
      best = it;
    }
  }
  Buffer buffer;
  if (best != free_sends_.end()) {
    buffer = std::move(*best);
    free_sends_.erase(best);
    return buffer;
  }
  GPUPLAN_RETURN_IF_ERROR(buffer.Reserve(count, "a pipeline message's send buffer"));
  return buffer;
}

Status NcclTransport::StartSend(int64_t peer, int tag, int64_t count) {
  if (count < 1) {
    return Status::Invalid(
        StrFormat("rank %lld: a message of %lld elements to rank %lld (at "
                  "least 1)",
                  static_cast<long long>(coord_.rank), static_cast<long long>(count),
                  static_cast<long long>(peer)));
  }
  Expected<Channel*> link = Link(coord_.rank, peer, tag);
  if (!link.ok()) return link.status();
  Channel& c = **link;
  Expected<Buffer> buffer = TakeSendBuffer(count);
  if (!buffer.ok()) return buffer.status();
  // Kept before the enqueues: whatever they return, the stream may read it until FinishSends.
  Buffer& sent = c.sends.emplace_back(std::move(*buffer));
  cudaStream_t stream = c.stream.get();
  const CheckSpec spec{CheckPattern::kMessage, 0, 2, count, tag, coord_.rank};
  GPUPLAN_RETURN_IF_ERROR(FillCheckSend(sent.data(), count, spec, stream));
  GPUPLAN_NCCL_RETURN_IF_ERROR(ncclSend(sent.data(), static_cast<size_t>(count), ncclInt64,
                                        /*peer=*/1, c.comm, stream));
  return Status::Ok();
}

Expected<CollectiveCheck> NcclTransport::RunReceive(int64_t peer, int tag, int64_t count,
                                                    const Watchdog& watchdog) {
  if (count < 1) {
    return Status::Invalid(StrFormat("%s: %lld elements (at least 1)", watchdog.what.c_str(),
                                     static_cast<long long>(count)));
  }
  Expected<Channel*> link = Link(peer, coord_.rank, tag);
  if (!link.ok()) return link.status();
  Channel& c = **link;
  GPUPLAN_RETURN_IF_ERROR(c.recv.Reserve(count, "a pipeline message's receive buffer"));
  cudaStream_t stream = c.stream.get();
  int64_t* recv = c.recv.data();
  const CheckSpec spec{CheckPattern::kMessage, 1, 2, count, tag, peer};
  GPUPLAN_CUDA_RETURN_IF_ERROR(cudaMemsetAsync(recv, 0xFF, Bytes(count), stream));
  GPUPLAN_NCCL_RETURN_IF_ERROR(
      ncclRecv(recv, static_cast<size_t>(count), ncclInt64, /*peer=*/0, c.comm, stream));
  return CheckAndWait(c, recv, count, spec, watchdog);
}

Expected<CollectiveCheck> NcclTransport::CheckAndWait(Channel& c, const int64_t* recv,
                                                      int64_t count, const CheckSpec& spec,
                                                      const Watchdog& watchdog) {
  cudaStream_t stream = c.stream.get();
  GPUPLAN_CUDA_RETURN_IF_ERROR(cudaMemsetAsync(c.Wrong(), 0, sizeof(int64_t), stream));
  GPUPLAN_RETURN_IF_ERROR(CountCheckWrong(recv, count, spec, c.Wrong(), stream));
  GPUPLAN_CUDA_RETURN_IF_ERROR(
      cudaMemcpyAsync(c.host.get(), c.Wrong(), sizeof(int64_t), cudaMemcpyDeviceToHost, stream));
  GPUPLAN_RETURN_IF_ERROR(Wait({&c}, watchdog));
  return CollectiveCheck{count, c.HostWrong()};
}

Status NcclTransport::FinishSends(const Watchdog& watchdog) {
  std::vector<Channel*> sending;
  for (const std::unique_ptr<Channel>& link : links_) {
    if (link != nullptr && !link->sends.empty()) sending.push_back(link.get());
  }
  if (sending.empty()) return Status::Ok();
  const Status waited = Wait(sending, watchdog);
  NoteFailure(waited);
  if (!waited.ok()) return waited;
  for (Channel* c : sending) {
    for (Buffer& b : c->sends) free_sends_.push_back(std::move(b));
    c->sends.clear();
  }
  return Status::Ok();
}

}  // namespace gpuplan
