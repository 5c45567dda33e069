// Tests of the prices and reliability figures in the hardware database: the built-in data
// (coverage, sourced values) and the loader's validation, error messages and override rules.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "hardware-db/hardware_db.h"
#include "hardware-db/pricing.h"
#include "tests/builtin_db.h"
#include "tests/temp_dir.h"

namespace gpuplan {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

::testing::AssertionResult Contains(const std::string& text, const std::string& part) {
  if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "expected \"" << part << "\" in \"" << text << "\"";
}

// The golden figures of reliability.json, from their published inputs.
constexpr double kLlama3InterruptionsPerGpuHour = 419.0 / (54.0 * 24.0 * 16384.0);
constexpr double kLlama3CheckpointBytesPerSPerNode = 2e12 / 2048.0;
constexpr double kAwsSpotPreemptionsPerInstanceHour = 0.175 / 730.0;  // 15-20 %/month midpoint
// Llama 3 Table 5: the 289 of 419 unexpected interruptions whose root cause is a host part.
constexpr double kLlama3HostRepairShare =
    (148 + 72 + 19 + 17 + 7 + 6 + 6 + 3 + 3 + 2 + 2 + 2 + 2) / 419.0;

// ---------------------------------------------------------------------------------------------
// Built-in database

class BuiltinPriceTest : public ::testing::Test {
 protected:
  static const HardwareDb& db() { return BuiltinDb(); }
};

std::set<std::string> ProvidersOf(const std::vector<const PriceEntry*>& prices) {
  std::set<std::string> providers;
  for (const PriceEntry* p : prices) providers.insert(p->provider);
  return providers;
}

TEST_F(BuiltinPriceTest, OnDemandAtSeveralProvidersForTrainingGpus) {
  for (const std::string gpu : {"h100-sxm5-80gb", "a100-sxm4-80gb", "h200-sxm-141gb"}) {
    SCOPED_TRACE(gpu);
    const std::vector<const PriceEntry*> prices = db().FindPrices(gpu, PriceKind::kOnDemand);
    EXPECT_GE(ProvidersOf(prices).size(), 4u);
  }
  EXPECT_GE(ProvidersOf(db().FindPrices("h100-sxm5-80gb", PriceKind::kOnDemand)).size(), 9u);
}

TEST_F(BuiltinPriceTest, SingleHostOffersAreLimitedAndAwsInstancesNameTheirNode) {
  for (const PriceEntry& p : db().prices()) {
    SCOPED_TRACE(p.provider + "/" + p.offering);
    if (p.provider == "vast" || p.provider == "runpod") {
      EXPECT_EQ(p.max_gpus_per_job, 8);
    }
    if (p.offering.rfind("1x", 0) == 0) {
      EXPECT_EQ(p.max_gpus_per_job, 1);
    }
    if (p.offering == "p5.48xlarge") {
      EXPECT_EQ(p.node, "p5-48xlarge");
    }
    if (p.offering == "p4d.24xlarge") {
      EXPECT_EQ(p.node, "p4d-24xlarge");
    }
  }
}

TEST_F(BuiltinPriceTest, HasSpotPrices) {
  EXPECT_FALSE(db().FindPrices("h100-sxm5-80gb", PriceKind::kSpot).empty());
  EXPECT_FALSE(db().FindPrices("h200-sxm-141gb", PriceKind::kSpot).empty());
  const std::set<std::string> spot_providers =
      ProvidersOf(db().FindPrices("h200-sxm-141gb", PriceKind::kSpot));
  EXPECT_TRUE(spot_providers.count("aws") == 1 && spot_providers.count("gcp") == 1);
}

TEST_F(BuiltinPriceTest, FindPricesIsSortedAndFiltered) {
  size_t total = 0;
  for (const std::string& gpu : db().GpuIds()) {
    for (PriceKind kind : {PriceKind::kOnDemand, PriceKind::kSpot}) {
      SCOPED_TRACE(gpu + " " + std::string(PriceKindName(kind)));
      const std::vector<const PriceEntry*> prices = db().FindPrices(gpu, kind);
      total += prices.size();
      for (const PriceEntry* p : prices) {
        EXPECT_EQ(p->gpu, gpu);
        EXPECT_EQ(p->kind, kind);
      }
      EXPECT_TRUE(std::is_sorted(prices.begin(), prices.end(),
                                 [](const PriceEntry* a, const PriceEntry* b) {
                                   return a->usd_per_gpu_hour < b->usd_per_gpu_hour;
                                 }));
    }
  }
  EXPECT_EQ(total, db().prices().size());  // every price belongs to a known GPU
  EXPECT_TRUE(db().FindPrices("no-such-gpu", PriceKind::kOnDemand).empty());
}

TEST_F(BuiltinPriceTest, EveryPriceIsKnownAndSourced) {
  ASSERT_GE(db().prices().size(), 50u);
  for (const PriceEntry& p : db().prices()) {
    SCOPED_TRACE(p.provider + "/" + p.gpu + "/" + p.offering);
    EXPECT_NE(db().FindGpu(p.gpu), nullptr);
    EXPECT_GT(p.usd_per_gpu_hour, 0.1);
    EXPECT_LT(p.usd_per_gpu_hour, 20.0);
    EXPECT_GE(p.gpus_per_instance, 1);
    EXPECT_FALSE(p.source.empty());
    EXPECT_FALSE(p.as_of.empty());
    EXPECT_FALSE(p.offering.empty());
  }
}

TEST_F(BuiltinPriceTest, ProvidersSortedAndUnique) {
  const std::vector<std::string> expected = {"aws",        "azure",  "coreweave", "gcp",
                                             "hyperstack", "lambda", "nebius",    "paperspace",
                                             "runpod",     "vast",   "verda"};
  EXPECT_EQ(db().Providers(), expected);
}

const PriceEntry* FindOne(const HardwareDb& db, const std::string& provider, const std::string& gpu,
                          const std::string& offering, PriceKind kind) {
  for (const PriceEntry* p : db.FindPrices(gpu, kind)) {
    if (p->provider == provider && p->offering == offering) return p;
  }
  return nullptr;
}

TEST_F(BuiltinPriceTest, SpotValues) {
  const PriceEntry* p5 =
      FindOne(db(), "aws", "h100-sxm5-80gb", "p5.48xlarge", PriceKind::kOnDemand);
  ASSERT_NE(p5, nullptr);
  EXPECT_DOUBLE_EQ(p5->usd_per_gpu_hour, 6.88);
  EXPECT_EQ(p5->gpus_per_instance, 8);
  EXPECT_EQ(p5->region, "us-east-1");

  // Published as a range: stored as its midpoint, the range in the notes.
  const PriceEntry* p5en =
      FindOne(db(), "aws", "h200-sxm-141gb", "p5en.48xlarge", PriceKind::kSpot);
  ASSERT_NE(p5en, nullptr);
  EXPECT_DOUBLE_EQ(p5en->usd_per_gpu_hour, (3.32 + 3.40) / 2);
  EXPECT_TRUE(Contains(p5en->notes, "3.32-3.4"));

  // Several observations: the most recent one is kept.
  const PriceEntry* lambda =
      FindOne(db(), "lambda", "h100-sxm5-80gb", "8x H100 SXM", PriceKind::kOnDemand);
  ASSERT_NE(lambda, nullptr);
  EXPECT_DOUBLE_EQ(lambda->usd_per_gpu_hour, 3.99);

  // RunPod Community Cloud is on-demand capacity.
  const PriceEntry* community =
      FindOne(db(), "runpod", "h100-sxm5-80gb", "Community Cloud", PriceKind::kOnDemand);
  ASSERT_NE(community, nullptr);
  EXPECT_DOUBLE_EQ(community->usd_per_gpu_hour, 2.69);
}

TEST_F(BuiltinPriceTest, ReliabilityEqualsSourcedFigures) {
  const ReliabilitySpec& r = db().reliability();
  EXPECT_DOUBLE_EQ(r.interruptions_per_gpu_hour, kLlama3InterruptionsPerGpuHour);
  EXPECT_NEAR(r.interruptions_per_gpu_hour, 1.9733e-5, 1e-9);
  EXPECT_DOUBLE_EQ(r.restart_s, 600);
  EXPECT_NEAR(r.host_repair_share, kLlama3HostRepairShare, 1e-4);  // stored to 4 digits
  EXPECT_DOUBLE_EQ(r.host_repair_s, 86400);                        // AM Compute: under a day
  EXPECT_DOUBLE_EQ(r.checkpoint_write_bytes_per_s_per_node, kLlama3CheckpointBytesPerSPerNode);
  EXPECT_DOUBLE_EQ(r.SpotPreemptionsPerInstanceHour("aws"), kAwsSpotPreemptionsPerInstanceHour);
  // No published GCP rate: GCP and unlisted providers use the stated default (the AWS figure).
  EXPECT_DOUBLE_EQ(r.SpotPreemptionsPerInstanceHour("gcp"), kAwsSpotPreemptionsPerInstanceHour);
  EXPECT_DOUBLE_EQ(r.SpotPreemptionsPerInstanceHour("default"), kAwsSpotPreemptionsPerInstanceHour);
  EXPECT_TRUE(Contains(r.source, "2407.21783"));
  EXPECT_TRUE(Contains(r.source, "stated assumption"));
  EXPECT_TRUE(Contains(r.source, "Spot Instance Advisor"));
  EXPECT_TRUE(Contains(r.source, "amcompute.com"));
}

// ---------------------------------------------------------------------------------------------
// Types of pricing.h

TEST(PriceKindTest, NamesRoundTrip) {
  for (PriceKind kind : {PriceKind::kOnDemand, PriceKind::kSpot}) {
    PriceKind parsed = PriceKind::kOnDemand;
    ASSERT_TRUE(ParsePriceKind(PriceKindName(kind), &parsed)) << PriceKindName(kind);
    EXPECT_EQ(parsed, kind);
  }
  EXPECT_EQ(PriceKindName(PriceKind::kOnDemand), "on-demand");
  EXPECT_EQ(PriceKindName(PriceKind::kSpot), "spot");
  PriceKind kind = PriceKind::kSpot;
  EXPECT_FALSE(ParsePriceKind("on_demand", &kind));
  EXPECT_FALSE(ParsePriceKind("Spot", &kind));
  EXPECT_FALSE(ParsePriceKind("", &kind));
  EXPECT_EQ(kind, PriceKind::kSpot);  // untouched on failure
}

TEST(ReliabilitySpecTest, SpotRateFallsBackToDefault) {
  ReliabilitySpec spec;
  EXPECT_EQ(spec.SpotPreemptionsPerInstanceHour("aws"), 0);
  spec.spot_preemptions_per_instance_hour["default"] = 0.002;
  EXPECT_DOUBLE_EQ(spec.SpotPreemptionsPerInstanceHour("aws"), 0.002);
  spec.spot_preemptions_per_instance_hour["aws"] = 0.0003;
  EXPECT_DOUBLE_EQ(spec.SpotPreemptionsPerInstanceHour("aws"), 0.0003);
  EXPECT_DOUBLE_EQ(spec.SpotPreemptionsPerInstanceHour("gcp"), 0.002);
}

// ---------------------------------------------------------------------------------------------
// Loader errors and overrides, with fixture files written into a fresh temporary directory.

json ValidPrice(const std::string& gpu, const std::string& kind, double usd) {
  return json{{"provider", "acme"},      {"gpu", gpu},
              {"offering", "box-8"},     {"kind", kind},
              {"usd_per_gpu_hour", usd}, {"gpus_per_instance", 8},
              {"as_of", "2026-11-01"},   {"source", "unit test fixture"}};
}

json ValidReliability() {
  return json{{"interruptions_per_gpu_hour", 1e-5},
              {"restart_s", 300},
              {"host_repair_share", 0.5},
              {"host_repair_s", 7200},
              {"checkpoint_write_gbps_per_node", 2},
              {"spot_preemptions_per_instance_hour", {{"acme", 0.01}, {"default", 0.001}}},
              {"source", "unit test fixture"}};
}

class PriceFilesTest : public ::testing::Test {
 protected:
  // Writes `doc` to dir/name (creating subdirectories) and returns the full path.
  std::string Write(const std::string& name, const json& doc) {
    const fs::path path = tmp_.path() / name;
    fs::create_directories(path.parent_path());
    std::ofstream out(path);
    out << doc.dump(2);
    return path.string();
  }

  // Loads one file into an empty database and returns the error message ("" when it loads).
  static std::string LoadError(const std::string& path) {
    HardwareDb db;
    Status st = db.LoadFile(path);
    return st.ok() ? "" : st.message();
  }

  std::string dir(const std::string& sub = "") const { return (tmp_.path() / sub).string(); }

 private:
  TempDir tmp_{"gpuplan_price_test_"};
};

TEST_F(PriceFilesTest, ValidFileLoads) {
  json price = ValidPrice("h100-sxm5-80gb", "spot", 2.5);
  price["region"] = "eu-west-1";
  price["notes"] = "fixture note";
  const std::string path =
      Write("p.json", json{{"prices", {price}}, {"reliability", ValidReliability()}});
  HardwareDb db;
  ASSERT_TRUE(db.LoadFile(path).ok()) << db.LoadFile(path).message();
  ASSERT_EQ(db.prices().size(), 1u);
  const PriceEntry& p = db.prices()[0];
  EXPECT_EQ(p.provider, "acme");
  EXPECT_EQ(p.gpu, "h100-sxm5-80gb");
  EXPECT_EQ(p.offering, "box-8");
  EXPECT_EQ(p.kind, PriceKind::kSpot);
  EXPECT_DOUBLE_EQ(p.usd_per_gpu_hour, 2.5);
  EXPECT_EQ(p.gpus_per_instance, 8);
  EXPECT_EQ(p.as_of, "2026-11-01");
  EXPECT_EQ(p.region, "eu-west-1");
  EXPECT_EQ(p.notes, "fixture note");
  EXPECT_EQ(db.Providers(), std::vector<std::string>{"acme"});
  const ReliabilitySpec& r = db.reliability();
  EXPECT_DOUBLE_EQ(r.interruptions_per_gpu_hour, 1e-5);
  EXPECT_DOUBLE_EQ(r.restart_s, 300);
  EXPECT_DOUBLE_EQ(r.host_repair_share, 0.5);
  EXPECT_DOUBLE_EQ(r.host_repair_s, 7200);
  EXPECT_DOUBLE_EQ(r.checkpoint_write_bytes_per_s_per_node, 2e9);  // GB/s -> bytes/s
  EXPECT_DOUBLE_EQ(r.SpotPreemptionsPerInstanceHour("acme"), 0.01);
  EXPECT_DOUBLE_EQ(r.SpotPreemptionsPerInstanceHour("other"), 0.001);
  EXPECT_EQ(r.source, "unit test fixture");
}

TEST_F(PriceFilesTest, UnknownGpuIdNamesFileEntryAndField) {
  const std::string path =
      Write("p.json", json{{"prices", {ValidPrice("no-such-gpu", "on-demand", 2)}}});
  Expected<HardwareDb> db = LoadHardwareDb({dir()});
  ASSERT_FALSE(db.ok());
  const std::string& err = db.status().message();
  EXPECT_TRUE(Contains(err, path));
  EXPECT_TRUE(Contains(err, "price 'acme/no-such-gpu/box-8/on-demand'"));
  EXPECT_TRUE(Contains(err, "field 'gpu'"));
  EXPECT_TRUE(Contains(err, "unknown gpu 'no-such-gpu'"));
}

TEST_F(PriceFilesTest, NegativePriceNamesFileEntryAndField) {
  const std::string path =
      Write("p.json", json{{"prices", {ValidPrice("h100-sxm5-80gb", "on-demand", -2)}}});
  const std::string err = LoadError(path);
  EXPECT_TRUE(Contains(err, path));
  EXPECT_TRUE(Contains(err, "price 'acme/h100-sxm5-80gb/box-8/on-demand'"));
  EXPECT_TRUE(Contains(err, "field 'usd_per_gpu_hour'"));
  EXPECT_TRUE(Contains(err, "-2"));

  json zero_gpus = ValidPrice("h100-sxm5-80gb", "on-demand", 2);
  zero_gpus["gpus_per_instance"] = 0;
  const std::string err2 = LoadError(Write("q.json", json{{"prices", {zero_gpus}}}));
  EXPECT_TRUE(Contains(err2, "field 'gpus_per_instance'"));
}

TEST_F(PriceFilesTest, OfferingNodeMustExistAndHoldTheGpu) {
  // Cross-references are checked once the built-in database is loaded beside the file.
  auto validate_error = [&](const json& price) {
    Write("p.json", json{{"prices", {price}}});
    Expected<HardwareDb> db = LoadHardwareDb({dir()});
    return db.ok() ? std::string() : db.status().message();
  };
  json unknown = ValidPrice("h100-sxm5-80gb", "on-demand", 2);
  unknown["node"] = "no-such-node";
  const std::string err = validate_error(unknown);
  EXPECT_TRUE(Contains(err, "field 'node'")) << err;
  EXPECT_TRUE(Contains(err, "no-such-node")) << err;

  json wrong_gpu = ValidPrice("h100-sxm5-80gb", "on-demand", 2);
  wrong_gpu["node"] = "dgx-a100";
  const std::string err2 = validate_error(wrong_gpu);
  EXPECT_TRUE(Contains(err2, "field 'node'")) << err2;
  EXPECT_TRUE(Contains(err2, "a100-sxm4-80gb")) << err2;

  json negative = ValidPrice("h100-sxm5-80gb", "on-demand", 2);
  negative["max_gpus_per_job"] = -1;
  EXPECT_TRUE(Contains(LoadError(Write("r.json", json{{"prices", {negative}}})),
                       "field 'max_gpus_per_job'"));
}

TEST_F(PriceFilesTest, UnknownKindNamesFileEntryAndField) {
  const std::string path =
      Write("p.json", json{{"prices", {ValidPrice("h100-sxm5-80gb", "reserved", 2)}}});
  const std::string err = LoadError(path);
  EXPECT_TRUE(Contains(err, path));
  EXPECT_TRUE(Contains(err, "price 'acme/h100-sxm5-80gb/box-8/reserved'"));
  EXPECT_TRUE(Contains(err, "field 'kind'"));
  EXPECT_TRUE(Contains(err, "'reserved' is not allowed"));
  EXPECT_TRUE(Contains(err, "on-demand, spot"));
}

TEST_F(PriceFilesTest, UnknownFieldNamesFileEntryAndField) {
  json price = ValidPrice("h100-sxm5-80gb", "spot", 2);
  price["usd_per_hour"] = 16;  // typo / wrong unit
  const std::string path = Write("p.json", json{{"prices", {price}}});
  const std::string err = LoadError(path);
  EXPECT_TRUE(Contains(err, path));
  EXPECT_TRUE(Contains(err, "price 'acme/h100-sxm5-80gb/box-8/spot'"));
  EXPECT_TRUE(Contains(err, "field 'usd_per_hour'"));
  EXPECT_TRUE(Contains(err, "unknown field"));
}

TEST_F(PriceFilesTest, MissingSourceNamesFileEntryAndField) {
  json price = ValidPrice("h100-sxm5-80gb", "spot", 2);
  price.erase("source");
  const std::string path = Write("p.json", json{{"prices", {price}}});
  const std::string err = LoadError(path);
  EXPECT_TRUE(Contains(err, path));
  EXPECT_TRUE(Contains(err, "price 'acme/h100-sxm5-80gb/box-8/spot'"));
  EXPECT_TRUE(Contains(err, "field 'source'"));
  EXPECT_TRUE(Contains(err, "required"));
}

TEST_F(PriceFilesTest, EntryWithoutKeyFieldsIsNamedByIndex) {
  json price = ValidPrice("h100-sxm5-80gb", "spot", 2);
  price.erase("provider");
  const std::string path =
      Write("p.json", json{{"prices", {ValidPrice("h100-sxm5-80gb", "on-demand", 2), price}}});
  const std::string err = LoadError(path);
  EXPECT_TRUE(Contains(err, path + ": prices[1]"));
  EXPECT_TRUE(Contains(err, "field 'provider'"));
}

TEST_F(PriceFilesTest, ProviderMustBeLowerCaseId) {
  json price = ValidPrice("h100-sxm5-80gb", "spot", 2);
  price["provider"] = "Acme Cloud";
  const std::string err = LoadError(Write("p.json", json{{"prices", {price}}}));
  EXPECT_TRUE(Contains(err, "field 'provider'"));
  EXPECT_TRUE(Contains(err, "lower-case"));
}

TEST_F(PriceFilesTest, DuplicatePriceInOneFile) {
  const json price = ValidPrice("h100-sxm5-80gb", "spot", 2);
  const std::string path = Write("p.json", json{{"prices", {price, price}}});
  const std::string err = LoadError(path);
  EXPECT_TRUE(Contains(err, path));
  EXPECT_TRUE(Contains(err, "duplicate price"));
  EXPECT_TRUE(Contains(err, "prices[0]"));
}

TEST_F(PriceFilesTest, TopLevelShapes) {
  EXPECT_TRUE(Contains(LoadError(Write("a.json", json{{"prices", ValidPrice("b200", "spot", 1)}})),
                       "'prices' must be an array"));
  EXPECT_TRUE(Contains(LoadError(Write("b.json", json{{"reliability", json::array()}})),
                       "'reliability' must be a JSON object"));
  EXPECT_TRUE(Contains(LoadError(Write("c.json", json{{"price", json::array()}})),
                       "unknown top-level key 'price'"));
}

TEST_F(PriceFilesTest, ReliabilityErrorsNameFileAndField) {
  json rel = ValidReliability();
  rel["restart_s"] = -5;
  std::string path = Write("a.json", json{{"reliability", rel}});
  std::string err = LoadError(path);
  EXPECT_TRUE(Contains(err, path + ": reliability: field 'restart_s'"));
  EXPECT_TRUE(Contains(err, "-5"));

  rel = ValidReliability();
  rel["checkpoint_write_gbps_per_node"] = 0;
  err = LoadError(Write("b.json", json{{"reliability", rel}}));
  EXPECT_TRUE(Contains(err, "field 'checkpoint_write_gbps_per_node'"));

  rel = ValidReliability();
  rel["host_repair_share"] = 1.5;
  err = LoadError(Write("g.json", json{{"reliability", rel}}));
  EXPECT_TRUE(Contains(err, "field 'host_repair_share'"));
  EXPECT_TRUE(Contains(err, "1.5"));

  rel = ValidReliability();
  rel["host_repair_s"] = -1;
  err = LoadError(Write("h.json", json{{"reliability", rel}}));
  EXPECT_TRUE(Contains(err, "field 'host_repair_s'"));

  rel = ValidReliability();
  rel["mtbf_h"] = 3;
  err = LoadError(Write("c.json", json{{"reliability", rel}}));
  EXPECT_TRUE(Contains(err, "field 'mtbf_h'"));
  EXPECT_TRUE(Contains(err, "unknown field"));

  rel = ValidReliability();
  rel.erase("source");
  path = Write("d.json", json{{"reliability", rel}});
  err = LoadError(path);
  EXPECT_TRUE(Contains(err, path + ": reliability: field 'source'"));

  rel = ValidReliability();
  rel["spot_preemptions_per_instance_hour"]["acme"] = -0.1;
  err = LoadError(Write("e.json", json{{"reliability", rel}}));
  EXPECT_TRUE(Contains(err, "in 'spot_preemptions_per_instance_hour'"));
  EXPECT_TRUE(Contains(err, "field 'acme'"));

  rel = ValidReliability();
  rel["spot_preemptions_per_instance_hour"]["AWS"] = 0.1;
  err = LoadError(Write("f.json", json{{"reliability", rel}}));
  EXPECT_TRUE(Contains(err, "field 'AWS'"));
  EXPECT_TRUE(Contains(err, "lower-case"));
}

TEST_F(PriceFilesTest, ValidateNeedsReliability) {
  HardwareDb empty;
  EXPECT_TRUE(Contains(empty.Validate().message(), "'reliability'"));

  // A reliability object that never gives the checkpoint bandwidth.
  json rel = ValidReliability();
  rel.erase("checkpoint_write_gbps_per_node");
  const std::string path = Write("r.json", json{{"reliability", rel}});
  HardwareDb db;
  ASSERT_TRUE(db.LoadFile(path).ok());
  const std::string err = db.Validate().message();
  EXPECT_TRUE(Contains(err, path + ": reliability: field 'checkpoint_write_gbps_per_node'"));

  // Nor the repair figures.
  for (const char* field : {"host_repair_share", "host_repair_s"}) {
    json partial = ValidReliability();
    partial.erase(field);
    const std::string file = Write(std::string(field) + ".json", json{{"reliability", partial}});
    HardwareDb missing;
    ASSERT_TRUE(missing.LoadFile(file).ok());
    EXPECT_TRUE(
        Contains(missing.Validate().message(), file + ": reliability: field '" + field + "'"))
        << missing.Validate().message();
  }
}

TEST_F(PriceFilesTest, FailedFileLeavesDbUnchanged) {
  json rel = ValidReliability();
  rel["restart_s"] = 100;
  const std::string good = Write("good.json", json{{"reliability", rel}});
  rel["restart_s"] = 200;
  const std::string bad = Write(
      "bad.json", json{{"prices", {ValidPrice("b200", "spot", 3), ValidPrice("b200", "x", 3)}},
                       {"reliability", rel}});
  HardwareDb db;
  ASSERT_TRUE(db.LoadFile(good).ok());
  EXPECT_FALSE(db.LoadFile(bad).ok());
  EXPECT_TRUE(db.prices().empty());
  EXPECT_DOUBLE_EQ(db.reliability().restart_s, 100);
}

TEST_F(PriceFilesTest, LaterDirectoryReplacesSameKeyAndAppendsOthers) {
  Expected<HardwareDb> builtin = LoadHardwareDb({});
  ASSERT_TRUE(builtin.ok()) << builtin.status().message();
  const size_t builtin_count = builtin->prices().size();
  const auto builtin_p5 =
      std::find_if(builtin->prices().begin(), builtin->prices().end(), [](const PriceEntry& p) {
        return p.provider == "aws" && p.gpu == "h100-sxm5-80gb" && p.offering == "p5.48xlarge" &&
               p.kind == PriceKind::kOnDemand;
      });
  ASSERT_NE(builtin_p5, builtin->prices().end());
  const auto p5_index = builtin_p5 - builtin->prices().begin();

  // First directory: two new prices (on-demand and spot of the same offering) and reliability.
  Write("a/prices.json", json{{"prices",
                               {ValidPrice("h100-sxm5-80gb", "on-demand", 2.0),
                                ValidPrice("h100-sxm5-80gb", "spot", 1.0)}},
                              {"reliability",
                               {{"restart_s", 300},
                                {"spot_preemptions_per_instance_hour", {{"acme", 0.01}}},
                                {"source", "dir a"}}}});
  // Second directory: replaces the acme on-demand price and a built-in AWS price, adds one price
  // and refines the reliability figures it names.
  json cheaper = ValidPrice("h100-sxm5-80gb", "on-demand", 1.5);
  cheaper["source"] = "dir b";
  json negotiated{{"provider", "aws"},     {"gpu", "h100-sxm5-80gb"}, {"offering", "p5.48xlarge"},
                  {"kind", "on-demand"},   {"usd_per_gpu_hour", 4.0}, {"gpus_per_instance", 8},
                  {"as_of", "2026-11-20"}, {"source", "our contract"}};
  Write("b/prices.json",
        json{{"prices", {cheaper, negotiated, ValidPrice("a100-sxm4-80gb", "on-demand", 1.0)}},
             {"reliability",
              {{"interruptions_per_gpu_hour", 1e-4},
               {"spot_preemptions_per_instance_hour", {{"default", 0.002}}},
               {"source", "dir b"}}}});

  Expected<HardwareDb> db = LoadHardwareDb({dir("a"), dir("b")});
  ASSERT_TRUE(db.ok()) << db.status().message();
  EXPECT_EQ(db->prices().size(), builtin_count + 3);

  const PriceEntry* acme = FindOne(*db, "acme", "h100-sxm5-80gb", "box-8", PriceKind::kOnDemand);
  ASSERT_NE(acme, nullptr);
  EXPECT_DOUBLE_EQ(acme->usd_per_gpu_hour, 1.5);
  EXPECT_EQ(acme->source, "dir b");
  const PriceEntry* acme_spot = FindOne(*db, "acme", "h100-sxm5-80gb", "box-8", PriceKind::kSpot);
  ASSERT_NE(acme_spot, nullptr);
  EXPECT_DOUBLE_EQ(acme_spot->usd_per_gpu_hour, 1.0);
  ASSERT_NE(FindOne(*db, "acme", "a100-sxm4-80gb", "box-8", PriceKind::kOnDemand), nullptr);

  // The built-in AWS price is replaced in place.
  const PriceEntry& p5 = db->prices()[static_cast<size_t>(p5_index)];
  EXPECT_EQ(p5.provider, "aws");
  EXPECT_EQ(p5.offering, "p5.48xlarge");
  EXPECT_DOUBLE_EQ(p5.usd_per_gpu_hour, 4.0);
  EXPECT_EQ(p5.source, "our contract");
  EXPECT_EQ(db->FindPrices("h100-sxm5-80gb", PriceKind::kOnDemand).front(), acme);  // cheapest

  // Reliability: each field from the last object that names it.
  const ReliabilitySpec& r = db->reliability();
  EXPECT_DOUBLE_EQ(r.interruptions_per_gpu_hour, 1e-4);  // b
  EXPECT_DOUBLE_EQ(r.restart_s, 300);                    // a
  EXPECT_DOUBLE_EQ(r.checkpoint_write_bytes_per_s_per_node, kLlama3CheckpointBytesPerSPerNode);
  EXPECT_DOUBLE_EQ(r.SpotPreemptionsPerInstanceHour("acme"), 0.01);  // a
  EXPECT_DOUBLE_EQ(r.SpotPreemptionsPerInstanceHour("aws"), kAwsSpotPreemptionsPerInstanceHour);
  EXPECT_DOUBLE_EQ(r.SpotPreemptionsPerInstanceHour("gcp"), 0.002);  // b
  // Sources accumulate, newest first.
  EXPECT_EQ(r.source.rfind("dir b | earlier: dir a | earlier: ", 0), 0u) << r.source;
  EXPECT_TRUE(Contains(r.source, "2407.21783"));
}

}  // namespace
}  // namespace gpuplan
