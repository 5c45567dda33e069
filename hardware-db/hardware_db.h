// Loads and validates the hardware database: the built-in JSON files plus any user directories.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "common/status.h"
#include "hardware-db/hardware.h"

namespace gpuplan {

/// All GPUs, networks and node templates known to one run. Lookups are by id.
class HardwareDb {
 public:
  /// Reads every `*.json` file in `dir` (see docs/HARDWARE_DB.md for the format). Entries in later
  /// calls override earlier ones with the same id, so a user directory can refine the built-in one.
  /// Errors name the file, the entry and the field: "gpus.json: gpu 'x': field 'memory_gb': ...".
  Status LoadDirectory(const std::string& dir);

  /// Reads one file (same format as LoadDirectory).
  Status LoadFile(const std::string& path);

  /// Checks cross-references (a node's gpu and network exist, a gpu's default_node exists) and
  /// ranges (scale-up domain >= 1, efficiencies in (0, 1]). Errors name the file of the entry.
  Status Validate() const;

  /// Lookups by id; nullptr when the id is not defined.
  const GpuSpec* FindGpu(const std::string& id) const;
  const NetworkSpec* FindNetwork(const std::string& id) const;
  const NodeTemplate* FindNode(const std::string& id) const;

  /// All ids of each kind, sorted.
  std::vector<std::string> GpuIds() const;
  std::vector<std::string> NetworkIds() const;
  std::vector<std::string> NodeIds() const;

  const std::map<std::string, GpuSpec>& gpus() const { return gpus_; }
  const std::map<std::string, NetworkSpec>& networks() const { return networks_; }
  const std::map<std::string, NodeTemplate>& nodes() const { return nodes_; }

 private:
  std::map<std::string, GpuSpec> gpus_;
  std::map<std::string, NetworkSpec> networks_;
  std::map<std::string, NodeTemplate> nodes_;
  // The file each entry was last read from, so Validate() can name it in its messages.
  std::map<std::string, std::string> gpu_files_;
  std::map<std::string, std::string> network_files_;
  std::map<std::string, std::string> node_files_;
};

/// Directory of the database shipped with gpuplan (compiled in at build time).
std::string BuiltinHardwareDbDir();

/// Loads the built-in database, then each of `extra_dirs` in order, then validates.
Expected<HardwareDb> LoadHardwareDb(const std::vector<std::string>& extra_dirs);

}  // namespace gpuplan
