// The CPU peak measured on the machine at hand: its cache file round-trips,
// a malformed or foreign cache is ignored with a warning naming the field, the
// machine takes the measured figures, and the result's hardware block
// records where its peak came from and reads back whole.
#include <gtest/gtest.h>

#include "core/config/config.h"
#include "core/config/hardware.h"
#include "core/config/peak_cache.h"
#include "core/runtime/peak_at_hand.h"
#include "tests/cli_test_util.h"

namespace ptdp {
namespace {

using test::ScratchDir;

MeasuredPeak sample_peak() { return {"Intel(R) Xeon(R) CPU @ 2.20GHz", 2, 1, 0.035, 22.9, "2026-12-01T07:30:00Z", false}; }

TEST(PeakCache, TheFileIsNamedByCpuCoresAndThreads) {
  EXPECT_EQ(peak_cache_file("/c", "Intel(R) Xeon(R) CPU @ 2.20GHz", 2, 1), "/c/peak-Intel-R-Xeon-R-CPU-2-20GHz-c2-t1.json");
  EXPECT_EQ(peak_cache_file("/c", "AMD EPYC", 16, 4), "/c/peak-AMD-EPYC-c16-t4.json");
}

TEST(PeakCache, ARecordRoundTrips) {
  ScratchDir dir("peak-cache");
  const MeasuredPeak p = sample_peak();
  const auto file = peak_cache_file(dir.path() / "made", p.cpu, p.cores, p.blas_threads);
  write_peak_cache(file, p);  // the folder is made
  std::string warning;
  const auto back = read_peak_cache(file, p.cpu, p.cores, p.blas_threads, warning);
  ASSERT_TRUE(back) << warning;
  EXPECT_EQ(warning, "");
  EXPECT_EQ(to_json(*back), to_json(p));
  EXPECT_TRUE(back->cached);
  EXPECT_FALSE(read_peak_cache(dir.path() / "absent.json", p.cpu, 2, 1, warning));  // none: measure, no warning
  EXPECT_EQ(warning, "");
}

TEST(PeakCache, AMalformedOrForeignRecordIsIgnoredNamingTheField) {
  ScratchDir dir("peak-cache-bad");
  const MeasuredPeak p = sample_peak();
  auto record = to_json(p);
  const auto refused = [&](const std::string& text, const std::string& field) {
    const auto file = dir.write("c.json", text);
    std::string warning;
    EXPECT_FALSE(read_peak_cache(file, p.cpu, p.cores, p.blas_threads, warning)) << text;
    EXPECT_NE(warning.find("ignored"), std::string::npos) << warning;
    EXPECT_NE(warning.find(field), std::string::npos) << warning;
  };
  refused("{not json", "c.json");
  refused("[1, 2]", "c.json");
  for (const auto& [key, bad] : std::vector<std::pair<std::string, nlohmann::json>>{
           {"fp32_tflops", -1.0}, {"bandwidth_gbs", 0.0}, {"fp32_tflops", "fast"}, {"measured_at", 3},
           {"cpu", "AMD EPYC"}, {"cores", 4}, {"blas_threads", 2}}) {
    auto j = record;
    j[key] = bad;
    refused(j.dump(), "/" + key);
  }
  auto missing = record;
  missing.erase("cores");
  refused(missing.dump(), "cores");
}

TEST(PeakCache, TheMachineTakesTheMeasuredFiguresAndSaysWhere) {
  Machine m = load_machine("cpu-host", default_machines_dir());
  EXPECT_EQ(profile_measured_on(m), "AMD EPYC");  // the profile records the CPU its peak is of
  use_measured_peak(m, sample_peak());
  EXPECT_EQ(m.peak_for("fp32"), 0.035);
  EXPECT_EQ(m.memory_bandwidth_gbs, 22.9);
  EXPECT_EQ(m.sources["peak_tflops"].rfind("measured: 0.035 TFLOP/s", 0), 0u) << m.sources["peak_tflops"];
  EXPECT_NE(m.sources["peak_tflops"].find("Xeon"), std::string::npos);
  EXPECT_NE(m.sources["peak_tflops"].find("profile 'cpu-host': 0.09"), std::string::npos);
  EXPECT_NE(m.sources["memory_bandwidth_gbs"].find("2026-12-01T07:30:00Z"), std::string::npos);
}

TEST(PeakCache, TheHardwareBlockRecordsThePeaksOriginAndReadsBack) {
  Hardware hw;
  hw.name = "AMD EPYC";
  hw.profile = "cpu-host";
  hw.measured_peak = sample_peak();
  hw.errors = {"MFU 120%"};
  const nlohmann::json j = to_json(hw);
  EXPECT_EQ(j["peak"]["from"], "measured");
  EXPECT_EQ(j["peak"]["fp32_tflops"], 0.035);
  EXPECT_EQ(to_json(hardware_of(JsonAt(j, "r"))), j);
  hw.measured_peak.reset();
  hw.profile_measured_on = "AMD EPYC";
  hw.errors.clear();
  const nlohmann::json k = to_json(hw);
  EXPECT_EQ(k["peak"], (nlohmann::json{{"from", "profile"}, {"profile", "cpu-host"}, {"measured_on", "AMD EPYC"}}));
  EXPECT_FALSE(k.contains("errors"));
  EXPECT_EQ(to_json(hardware_of(JsonAt(k, "r"))), k);
  auto bad = k;
  bad["peak"]["from"] = "guessed";
  EXPECT_THROW(hardware_of(JsonAt(bad, "r")), JsonRefused);
}

TEST(PeakCache, TheSettingIsOneZeroOrAgain) {
  EXPECT_EQ(peak_setting(nullptr), PeakSetting::measured);
  EXPECT_EQ(peak_setting("1"), PeakSetting::measured);
  EXPECT_EQ(peak_setting("0"), PeakSetting::profile);
  EXPECT_EQ(peak_setting("again"), PeakSetting::again);
  EXPECT_FALSE(peak_setting("yes"));
  EXPECT_FALSE(peak_setting(""));
}

// A cache of the first method (no "method" field) is measured again, with a
// warning naming the field; the best of two measurements keeps each best rate.
TEST(PeakCache, AnotherMethodsRecordIsIgnoredAndTheBestRatesAreKept) {
  ScratchDir dir("peak-cache-method");
  MeasuredPeak old = sample_peak();
  nlohmann::json doc = to_json(old);
  doc.erase("method");
  const auto file = dir.write("c.json", doc.dump());
  std::string warning;
  EXPECT_FALSE(read_peak_cache(file, old.cpu, old.cores, old.blas_threads, warning));
  EXPECT_NE(warning.find("/method"), std::string::npos) << warning;
  MeasuredPeak fast_gemm = old, fast_memory = old;
  fast_gemm.fp32_tflops = 0.12, fast_gemm.measured_at = "2026-12-02T08:00:00Z";
  fast_memory.bandwidth_gbs = 30;
  const MeasuredPeak best = best_of(fast_memory, fast_gemm);
  EXPECT_EQ(best.fp32_tflops, 0.12);
  EXPECT_EQ(best.bandwidth_gbs, 30);
  EXPECT_EQ(best.measured_at, "2026-12-02T08:00:00Z");
}

// Timing-free: that a measurement gives positive rates and says what it was made on.
TEST(PeakCache, AMeasurementGivesPositiveRates) {
  const MeasuredPeak p = measure_cpu_peak("this CPU", 2);
  EXPECT_GT(p.fp32_tflops, 0);
  EXPECT_GT(p.bandwidth_gbs, 0);
  EXPECT_GE(p.blas_threads, 1);
  EXPECT_EQ(p.cpu, "this CPU");
  EXPECT_EQ(p.measured_at.size(), 20u);  // 2026-12-01T07:30:00Z
}

}  // namespace
}  // namespace ptdp
