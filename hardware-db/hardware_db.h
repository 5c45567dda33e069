// Loads and validates the hardware database: the built-in JSON files plus any user directories.
// Besides hardware it holds GPU-hour prices and reliability figures (hardware-db/pricing.h).
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/status.h"
#include "hardware-db/framework_spec.h"
#include "hardware-db/hardware.h"
#include "hardware-db/pricing.h"

namespace gpuplan {

/// All GPUs, networks, node templates, prices and reliability figures known to one run. Lookups
/// are by id.
class HardwareDb {
 public:
  /// Reads every `*.json` file in `dir` (see docs/HARDWARE_DB.md for the format). Entries in later
  /// calls override earlier ones with the same id, so a user directory can refine the built-in one;
  /// a price replaces an earlier one with the same (provider, gpu, offering, kind), other prices
  /// are appended; a "reliability" object replaces the fields it names.
  /// Errors name the file, the entry and the field: "gpus.json: gpu 'x': field 'memory_gb': ...".
  Status LoadDirectory(const std::string& dir);

  /// Reads one file (same format as LoadDirectory): ReadJsonFile, then LoadJson.
  Status LoadFile(const std::string& path);

  /// Adds the entries of one parsed file; `origin` (its path) names it in errors and in
  /// Validate()'s messages. A bad file leaves the database unchanged.
  Status LoadJson(const nlohmann::json& doc, const std::string& origin);

  /// Checks cross-references (a node's gpu and network exist, a gpu's default_node exists, a
  /// price's gpu exists) and ranges (scale-up domain >= 1, efficiencies in (0, 1], prices > 0,
  /// gpus_per_instance >= 1, reliability rates and restart time >= 0, checkpoint bandwidth > 0),
  /// and that some file gave a "reliability" object with a source. Errors name the file of the
  /// entry.
  Status Validate() const;

  /// Lookups by id; nullptr when the id is not defined.
  const GpuSpec* FindGpu(const std::string& id) const;
  const NetworkSpec* FindNetwork(const std::string& id) const;
  const NodeTemplate* FindNode(const std::string& id) const;
  /// The training stack `id` (frameworks.json); nullptr when the id is not defined.
  const FrameworkSpec* FindFramework(const std::string& id) const;

  /// All ids of each kind, sorted.
  std::vector<std::string> GpuIds() const;
  std::vector<std::string> NetworkIds() const;
  std::vector<std::string> NodeIds() const;
  std::vector<std::string> FrameworkIds() const;

  const std::map<std::string, GpuSpec>& gpus() const { return gpus_; }
  const std::map<std::string, NetworkSpec>& networks() const { return networks_; }
  const std::map<std::string, NodeTemplate>& nodes() const { return nodes_; }
  const std::map<std::string, FrameworkSpec>& frameworks() const { return frameworks_; }

  /// Every price, in load order (a replaced price keeps the position of the one it replaced).
  const std::vector<PriceEntry>& prices() const { return prices_; }
  /// The reliability figures merged over all loaded files; all zero when none gave any.
  const ReliabilitySpec& reliability() const { return reliability_; }

  /// Prices of `gpu` of `kind` at every provider and offering, cheapest usd_per_gpu_hour first
  /// (equal prices in load order); empty when there is none. The pointers are valid until the
  /// next Load* call.
  std::vector<const PriceEntry*> FindPrices(const std::string& gpu, PriceKind kind) const;
  /// Provider ids of all prices, sorted, each once.
  std::vector<std::string> Providers() const;

 private:
  Status ValidateReliability() const;

  std::map<std::string, GpuSpec> gpus_;
  std::map<std::string, NetworkSpec> networks_;
  std::map<std::string, NodeTemplate> nodes_;
  std::map<std::string, FrameworkSpec> frameworks_;
  // The file each entry was last read from, so Validate() can name it in its messages.
  std::map<std::string, std::string> gpu_files_;
  std::map<std::string, std::string> network_files_;
  std::map<std::string, std::string> node_files_;
  std::map<std::string, std::string> framework_files_;
  std::vector<PriceEntry> prices_;
  // "<file>: price '<provider>/<gpu>/<offering>/<kind>'" of each price, parallel to prices_.
  std::vector<std::string> price_contexts_;
  ReliabilitySpec reliability_;
  std::string reliability_file_;  // last file with a "reliability" object; empty when none
};

/// Root of the data shipped with gpuplan (the hardware database and the calibration data).
/// An installed program (`cmake --install`: `<prefix>/bin/gpuplan`) reads
/// `<prefix>/share/gpuplan`; a program run from its build tree reads the source tree, whose
/// path is compiled in. Either way `gpuplan` works from any directory.
std::string DataRoot();

/// The rule of DataRoot, without side effects: `<dir of executable>/../share/gpuplan` when that
/// folder holds `hardware-db/`, else `compiled_root`.
std::string ResolveDataRoot(const std::string& executable_path, const std::string& compiled_root);

/// Directory of the database shipped with gpuplan: `DataRoot()/hardware-db/data`.
std::string BuiltinHardwareDbDir();

/// Directory of the published measurements shipped with gpuplan (`published_runs.json`,
/// `collectives.json`, `gemm.json`, `ultrascale_sweep.csv`; hardware-db/calibration/README.md):
/// `DataRoot()/hardware-db/calibration`.
std::string BuiltinCalibrationDir();

/// Loads the built-in database, then each of `extra_dirs` in order, then validates.
Expected<HardwareDb> LoadHardwareDb(const std::vector<std::string>& extra_dirs);

}  // namespace gpuplan
