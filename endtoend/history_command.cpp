// `ptdp history DIR --metric model_tflops_per_gpu [--out PNG]`: a metric over
// commits from a folder of CI results, the regression gate applied between
// neighbours (core/gate/history.h decides what is flagged), one line per
// commit and configuration, and a plot drawn by report/plot_history.py
// (Python only draws what it is given).
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>

#include "core/config/data_root.h"
#include "core/gate/history.h"
#include "core/process/child_process.h"
#include "core/results/metric_path.h"
#include "core/results/output_files.h"
#include "core/results/result_io.h"
#include "endtoend/cli_common.h"
#include "endtoend/commands.h"
#include "endtoend/gate_options.h"

namespace ptdp::cli {

namespace {

struct HistoryArgs {
  std::string dir, metric = "model_tflops_per_gpu", out, json, python = "python3";
  double threshold = 5, alpha = kDefaultAlpha;
};

std::string number_text(const char* format, double v) {
  char text[64];
  std::snprintf(text, sizeof text, format, v);
  return text;
}

// "  0003-9f2c1ab.json  9f2c1ab  141.2  -9.8%  p 0.0002  FLAGGED"
void print_history(const History& h) {
  for (const auto& s : h.series) {
    std::printf("%s (%s): %s\n", s.label.c_str(), to_string(s.mode), h.metric.c_str());
    for (const auto& p : s.points) {
      std::string line = "  " + p.file + "  " + p.commit.substr(0, 12) + "  " +
                         (p.value ? number_text("%.4g", *p.value) : "—");
      if (p.delta_pct) line += "  " + number_text("%+.1f%%", *p.delta_pct);
      if (p.gate && p.gate->noise.p_value) line += "  p " + number_text("%.2g", *p.gate->noise.p_value);
      if (p.gate && !p.gate->noise.p_value && p.gate->mode == ResultMode::measured) line += "  (threshold only)";
      if (p.flagged) line += "  FLAGGED";
      if (!p.not_judged.empty()) line += "  not judged: " + p.not_judged;
      std::printf("%s\n", line.c_str());
    }
  }
  std::printf("%zu configuration(s), %d commit(s) flagged beyond %g%% (noise test at alpha %g)\n", h.series.size(),
              h.flagged, h.threshold_pct, h.alpha);
}

std::string read_text(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// A folder of this process's own in the temp folder, made by mkdtemp
// (exclusively, mode 0700, an unpredictable name): no link planted there
// beforehand can redirect a write into it. Removed, with what it holds, when
// destroyed.
class ScratchFolder {
 public:
  explicit ScratchFolder(const std::string& prefix) {
    std::string name = (std::filesystem::temp_directory_path() / (prefix + "XXXXXX")).string();
    if (::mkdtemp(name.data()) == nullptr)
      throw std::runtime_error("cannot create a scratch folder " + name + ": " + std::strerror(errno));
    path_ = name;
  }
  ~ScratchFolder() {
    std::error_code ignored;  // a destructor must not throw; the folder is the temp folder's to clean
    std::filesystem::remove_all(path_, ignored);
  }
  ScratchFolder(const ScratchFolder&) = delete;
  ScratchFolder& operator=(const ScratchFolder&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// Runs report/plot_history.py on `data` to write the PNG at `png`; throws
// with the script's output when it fails. Its input and log live in a
// scratch folder of this run's own.
void draw(const std::string& python, const nlohmann::json& data, const std::filesystem::path& png) {
  const ScratchFolder scratch("ptdp-history-");
  const auto input = scratch.path() / "history.json", log = scratch.path() / "plot.log";
  write_json_atomic(input, data);
  int status = 0;
  {
    ChildProcess plot({python, (data_root() / "report" / "plot_history.py").string(), input.string(), png.string()},
                      log);
    while (!plot.poll(status)) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (status != 0)
    throw std::runtime_error(python + " report/plot_history.py exited with " + std::to_string(status) + ": " +
                             read_text(log));
}

// The history of DIR's results; its outputs checked against them first, so
// neither --out nor --json ever replaces a file it reads. Exit status, or -1
// with `h` filled.
int read_history(const HistoryArgs& args, History& h) {
  try {
    const std::vector<std::filesystem::path> paths = history_files(args.dir);
    std::vector<OutputOption> inputs;
    for (const auto& p : paths) inputs.push_back({"DIR", p.string()});
    if (const ConfigErrors bad = check_outputs({{"--out", args.out}, {"--json", args.json}}, inputs); !bad.empty()) {
      print_refused("history", bad);
      return kExitRefused;
    }
    h = build_history(load_history_files(paths), args.metric, args.threshold, args.alpha);
  } catch (const UnknownMetric& e) {  // a name no result reports
    std::fprintf(stderr, "ptdp history: --metric: %s\n", e.what());
    return kExitRefused;
  } catch (const std::invalid_argument& e) {  // the metric no file has
    std::fprintf(stderr, "ptdp history: --metric %s: %s in %s\n", args.metric.c_str(), e.what(), args.dir.c_str());
    return kExitRefused;
  } catch (const std::runtime_error& e) {  // an unreadable folder or a malformed file, named
    std::fprintf(stderr, "ptdp history: %s\n", e.what());
    return kExitRefused;
  }
  return -1;
}

int run(const HistoryArgs& args) {
  History h;
  if (const int status = read_history(args, h); status >= 0) return status;
  print_history(h);
  try {
    OutputFiles files;  // the plot and the JSON together, or neither
    const nlohmann::json data = to_json(h);
    if (!args.json.empty()) files.add(args.json, data);
    if (!args.out.empty()) files.add_file(args.out, [&](const std::filesystem::path& tmp) { draw(args.python, data, tmp); });
    files.commit();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ptdp history: writing the outputs: %s\n", e.what());
    return kExitFailed;
  }
  return kExitOk;
}

}  // namespace

Command add_history_command(CLI::App& app) {
  auto args = std::make_shared<HistoryArgs>();
  CLI::App* sub = app.add_subcommand("history", "A metric over commits from a folder of result files, with the "
                                                "commits the regression gate flags.");
  sub->footer(
      "DIR holds ptdp.result/2 or ptdp.sweep-results/1 files, read in file-name order (results record their commit, "
      "not a time: name them so that they sort by time, e.g. 20261127T1800Z-COMMIT.json). Each configuration is "
      "gated against its previous file with `ptdp compare`'s rule (threshold and noise test). One line per file and "
      "configuration.\nExit status: 0 written (flagged commits are reported, not failed), 1 the plot could not be "
      "drawn, 2 an unreadable folder or file, an output that is one of DIR's files, or a metric no file has.");
  sub->add_option("DIR", args->dir, "Folder of result files")->required()->check(CLI::ExistingDirectory);
  sub->add_option("--metric", args->metric, "The figure to follow: a path under metrics, dotted")->capture_default_str();
  sub->add_option("--out", args->out, "Draw the plot to this PNG (matplotlib, through --python)");
  sub->add_option("--json", args->json, "Write the history JSON here (ptdp.history/1)");
  sub->add_option("--python", args->python, "Python with matplotlib that runs report/plot_history.py")
      ->capture_default_str();
  add_gate_options(*sub, args->threshold, args->alpha);
  return {sub, [args] { return run(*args); }};
}

}  // namespace ptdp::cli
