// The measured CPU peak's cache file and its use in the machine; see peak_cache.h.
#include "core/config/peak_cache.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <system_error>

#include "core/io/staged_file.h"

namespace ptdp {

namespace {

std::string peak_rate_text(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.4g", v);
  return text;
}

}  // namespace

std::filesystem::path peak_cache_file(const std::filesystem::path& dir, const std::string& cpu, int cores,
                                      int blas_threads) {
  std::string name = "peak-";
  for (const char c : cpu)  // letters and digits kept, every other run of bytes one '-'
    if (std::isalnum(static_cast<unsigned char>(c))) name += c;
    else if (name.back() != '-') name += '-';
  if (name.back() != '-') name += '-';
  return dir / (name + "c" + std::to_string(cores) + "-t" + std::to_string(blas_threads) + ".json");
}

std::filesystem::path peak_cache_dir() {
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  if (xdg != nullptr && std::filesystem::path(xdg).is_absolute()) return std::filesystem::path(xdg) / "ptdp";
  const char* home = std::getenv("HOME");
  if (home != nullptr && *home != '\0') return std::filesystem::path(home) / ".cache" / "ptdp";
  return {};
}

std::optional<MeasuredPeak> read_peak_cache(const std::filesystem::path& file, const std::string& cpu, int cores,
                                            int blas_threads, std::string& warning) {
  std::error_code ec;
  if (!std::filesystem::exists(file, ec)) return std::nullopt;
  try {
    const nlohmann::json doc = read_json_file(file);
    const JsonAt j(doc, file.string());
    MeasuredPeak p = measured_peak_of(j);
    if (p.cpu != cpu) j.at("cpu").refuse("is another CPU's record (this one is \"" + cut_text(cpu) + "\")");
    if (p.cores != cores) j.at("cores").refuse("is another core count's record (" + std::to_string(cores) + " here)");
    if (p.method != kPeakMethod)
      j.at("method").refuse("is another measuring method's record (" + std::to_string(kPeakMethod) + " here)");
    if (p.blas_threads != blas_threads)
      j.at("blas_threads").refuse("is another thread count's record (" + std::to_string(blas_threads) + " here)");
    p.cached = true;
    return p;
  } catch (const JsonRefused& e) {
    warning = std::string("the cached CPU peak is ignored (it is measured again): ") + e.what();
    return std::nullopt;
  }
}

MeasuredPeak best_of(const MeasuredPeak& a, const MeasuredPeak& b) {
  MeasuredPeak p = a.fp32_tflops >= b.fp32_tflops ? a : b;
  p.bandwidth_gbs = std::max(a.bandwidth_gbs, b.bandwidth_gbs);
  p.cached = false;
  return p;
}

void write_peak_cache(const std::filesystem::path& file, const MeasuredPeak& p) {
  std::error_code ec;
  std::filesystem::create_directories(file.parent_path(), ec);
  if (ec) throw std::runtime_error(file.parent_path().string() + ": cannot make the folder: " + ec.message());
  write_file_atomic(file, to_json(p).dump(2) + "\n");
}

void use_measured_peak(Machine& m, const MeasuredPeak& p) {
  const std::string where = " on this machine's " + p.cpu + " (" + std::to_string(p.cores) + " cores, " +
                            std::to_string(p.blas_threads) + " BLAS thread" + (p.blas_threads == 1 ? "" : "s") +
                            ") at " + p.measured_at + (p.cached ? ", read from the cache" : "");
  const std::string profile = " (profile '" + m.name + "': ";
  m.sources["peak_tflops"] = "measured: " + peak_rate_text(p.fp32_tflops) + " TFLOP/s, the best fp32 GEMM rate through "
                             "the CPU backend's BLAS" + where + profile + peak_rate_text(m.peak_for("fp32")) + ")";
  m.sources["memory_bandwidth_gbs"] = "measured: " + peak_rate_text(p.bandwidth_gbs) + " GB/s, the best streaming triad "
                                      "(bytes read + written)" + where + profile +
                                      peak_rate_text(m.memory_bandwidth_gbs) + ")";
  m.peak_tflops["fp32"] = p.fp32_tflops;
  m.memory_bandwidth_gbs = p.bandwidth_gbs;
}

nlohmann::json to_json(const MeasuredPeak& p) {
  return {{"cpu", p.cpu},
          {"cores", p.cores},
          {"blas_threads", p.blas_threads},
          {"fp32_tflops", p.fp32_tflops},
          {"bandwidth_gbs", p.bandwidth_gbs},
          {"measured_at", p.measured_at},
          {"method", p.method}};
}

MeasuredPeak measured_peak_of(const JsonAt& j) {
  j.object();
  MeasuredPeak p;
  p.cpu = j.at("cpu").get<std::string>();
  p.cores = j.at("cores").get<int>();
  p.blas_threads = j.at("blas_threads").get<int>();
  p.fp32_tflops = j.at("fp32_tflops").get<double>();
  p.bandwidth_gbs = j.at("bandwidth_gbs").get<double>();
  p.measured_at = j.at("measured_at").get<std::string>();
  p.method = j.get<int>("method", 1);  // records from before the field: method 1
  for (const char* rate : {"fp32_tflops", "bandwidth_gbs"})
    if (!(j.at(rate).get<double>() > 0)) j.at(rate).refuse("must be a positive rate");
  return p;
}

}  // namespace ptdp
