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
  /// Errors name the file, the entry id and the field: "gpus.json: gpu 'x': field 'memory_gb': ...".
  Status LoadDirectory(const std::string& dir);

  /// Reads one file (same format as LoadDirectory).
  Status LoadFile(const std::string& path);

  /// Checks cross-references (a node's gpu and network exist, a gpu's default_node exists).
  Status Validate() const;

  const GpuSpec* FindGpu(const std::string& id) const;
  const NetworkSpec* FindNetwork(const std::string& id) const;
  const NodeTemplate* FindNode(const std::string& id) const;

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
};

/// Directory of the database shipped with gpuplan (compiled in at build time).
std::string BuiltinHardwareDbDir();

/// Loads the built-in database, then each of `extra_dirs` in order, then validates.
Expected<HardwareDb> LoadHardwareDb(const std::vector<std::string>& extra_dirs);

}  // namespace gpuplan
