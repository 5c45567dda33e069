// The GPU backend's choice of device (validator/local_device.h): the rank's place on its node
// when every rank sees the node's GPUs, device 0 when each rank was given GPUs of its own (Slurm
// GPU binding), and an error when ranks would share a GPU.
#include "validator/local_device.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace gpuplan {
namespace {

TEST(LocalDevice, EveryRankSeesTheNodesGpus) {
  // mpirun, or srun without binding: 8 ranks, 8 GPUs each, all first seeing the node's GPU 0.
  const std::vector<std::string> same(8, "00000000:18:00.0");
  for (int rank = 0; rank < 8; ++rank) EXPECT_EQ(*ChooseLocalDevice(rank, 8, 8, same), rank);
  // Fewer ranks than GPUs: the first ones.
  EXPECT_EQ(*ChooseLocalDevice(1, 2, 8, std::vector<std::string>(2, "a")), 1);
}

TEST(LocalDevice, RanksBoundToTheirOwnGpusTakeTheirDeviceZero) {
  // srun --gpus-per-task=1 (or --gpu-bind): each rank sees one GPU, a different one.
  const std::vector<std::string> bound = {"00000000:18:00.0", "00000000:2A:00.0",
                                          "00000000:3A:00.0", "00000000:5D:00.0"};
  for (int rank = 0; rank < 4; ++rank) EXPECT_EQ(*ChooseLocalDevice(rank, 4, 1, bound), 0);
  // Two GPUs each, bound: still their own first.
  EXPECT_EQ(*ChooseLocalDevice(3, 4, 2, bound), 0);
}

TEST(LocalDevice, RanksThatWouldShareAGpuAreRefused) {
  Expected<int> shared = ChooseLocalDevice(1, 2, 1, std::vector<std::string>(2, "a"));
  ASSERT_FALSE(shared.ok());
  EXPECT_EQ(shared.status().kind(), ErrorKind::kUnavailable);
  EXPECT_EQ(shared.status().message(),
            "2 ranks on this node and 1 GPUs: NCCL needs one GPU per rank");
  // Two of three ranks bound to the same GPU: not one each.
  EXPECT_FALSE(ChooseLocalDevice(0, 3, 1, std::vector<std::string>{"a", "a", "b"}).ok());
  Expected<int> none = ChooseLocalDevice(0, 1, 0, std::vector<std::string>{""});
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().message(), "no CUDA GPU: cudaGetDeviceCount reports 0 devices");
  EXPECT_EQ(*ChooseLocalDevice(0, 1, 1, std::vector<std::string>{"a"}), 0);         // one rank
  EXPECT_FALSE(ChooseLocalDevice(2, 2, 8, std::vector<std::string>(2, "a")).ok());  // bad input
}

}  // namespace
}  // namespace gpuplan
