// `ptdp sweep FILE --emit-slurm DIR`: one sbatch job per measured point, a
// manifest naming the sweep's identity and points, and submit.sh. What the
// sweep file and the options put into a script is checked first (a label with
// a newline would be a line of its own, run by the job), and the files are
// written all or none through exclusive temporaries (OutputFiles).
#include <cstdio>

#include "core/config/json_read.h"
#include "core/launch/slurm_script.h"
#include "core/results/output_files.h"
#include "core/sweep/slurm_folder.h"
#include "core/sweep/sweep_results.h"
#include "endtoend/cli_common.h"
#include "endtoend/commands.h"
#include "endtoend/point_process.h"
#include "endtoend/slurm_sweep.h"

namespace ptdp::cli {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// Why the jobs may not be written into `dir`, or "": a new or empty folder, or
// one holding this sweep's jobs (rewritten), never another sweep's or other files.
std::string emit_folder_problem(const fs::path& dir, const std::string& sweep_name) {
  std::error_code ec;
  if (!fs::exists(dir, ec)) return "";
  if (!fs::is_directory(dir, ec)) return "exists and is not a folder";
  if (fs::is_empty(dir, ec)) return "";
  if (!fs::exists(manifest_path(dir), ec))
    return "is not empty and holds no manifest.json of ptdp Slurm jobs; choose a new or empty folder";
  try {
    const json m = read_json_file(manifest_path(dir));
    const SweepIdentity id = read_identity(JsonAt(m, manifest_path(dir).string()).at("identity"));
    if (id.name != sweep_name)
      return "holds the Slurm jobs of sweep \"" + id.name + "\", not \"" + sweep_name + "\"; choose another folder";
  } catch (const JsonRefused& e) {
    return std::string("holds a manifest.json that is refused: ") + e.what();
  }
  return "";
}

// The measured points to emit; what is left out is counted (projected) or listed (why not).
struct EmitPlan {
  std::vector<const SweepPoint*> points;
  int projected = 0;
  std::vector<std::string> left_out;
};

EmitPlan plan_emit(const Sweep& sweep, const SweepOptions& o) {
  const SweepMode requested = o.mode.value_or(sweep.mode);
  RankLimits limits;  // the job asks Slurm for the nodes it needs: only --max-ranks bounds it
  if (o.max_ranks > 0) limits.max_ranks = o.max_ranks;
  limits.spans_nodes = true;
  EmitPlan plan;
  for (const auto& p : sweep.points) {
    const std::string why = p.errors.empty() ? measure_refusal(p.config, limits)
                                             : p.errors.front().field + ": " + p.errors.front().message;
    if (requested != SweepMode::project && why.empty()) plan.points.push_back(&p);
    else if (requested == SweepMode::measure || !p.errors.empty())
      plan.left_out.push_back("#" + std::to_string(p.index) + ": " + why);
    else ++plan.projected;
  }
  return plan;
}

SlurmJob point_job(const Sweep& sweep, const SweepPoint& p, const fs::path& sweep_file, const fs::path& dir,
                   const Launcher& launcher, const SweepOptions& o) {
  const double timeout = point_timeout(o, ResultMode::measured);
  SlurmJob job;
  job.name = "ptdp-" + sweep.name + "-" + std::to_string(p.index);
  job.shape = launch_shape(p.config.plan.world_size(), p.config.machine);
  job.gpus = p.config.machine.device != Device::cpu;
  job.time_limit_s = timeout + kSlurmJobMarginS;
  job.output = (dir / (point_stem(p.index) + ".slurm.out")).string();
  const std::string what = p.series.empty() ? p.label : p.series + " " + p.label;
  job.notes = {"ptdp sweep " + sweep.name + ", point " + std::to_string(p.index) + " (" + what +
                   "): its ranks start through the launcher as",
               "  " + launcher.command_line(job.shape, {"ptdp", "train", "..."}),
               "and its outcome goes to " + point_result_path(dir, p.index).string() +
                   ", which `ptdp sweep FILE --collect DIR` merges."};
  job.command = shell_join({fs::read_symlink("/proc/self/exe").string(), "sweep-slurm-point", sweep_file.string(),
                            "--point", std::to_string(p.index), "--launcher", launcher.spec(), "--timeout",
                            std::to_string(static_cast<long>(timeout)), "--max-points", std::to_string(o.max_points),
                            "--out", point_result_path(dir, p.index).string()});
  return job;
}

// Every value of the sweep or the options that would reach a script and
// cannot, naming its field or option: a control character in an emitted
// point's label or series (a comment line) or in the sweep file's path (the
// command line); in the folder's path (the --output header), anything an
// #SBATCH header cannot hold. The sweep's name is a file name (load_sweep).
ConfigErrors script_value_problems(const Sweep& sweep, const EmitPlan& plan, const fs::path& dir) {
  ConfigErrors e;
  const auto check = [&e](const std::string& field, const std::string& value, const std::string& why) {
    if (!why.empty()) e.push_back({field, field + " " + json_excerpt(json(value)) + ": " + why});
  };
  check("--emit-slurm", dir.string(), sbatch_value_problem(dir.string()));
  check("FILE", fs::absolute(sweep.file).string(), control_character_problem(fs::absolute(sweep.file).string()));
  for (const SweepPoint* p : plan.points) {
    const std::string point = "points[" + std::to_string(p->index) + "] ";
    check(point + "label (paper.label)", p->label, control_character_problem(p->label));
    check(point + "series (paper.series)", p->series, control_character_problem(p->series));
  }
  return e;
}

// The folder's files and their text: a job per point, submit.sh, the
// manifest. Rendered before anything is written: a value that no script may
// hold throws SlurmScriptRefused here, with nothing made yet.
using EmitFiles = std::vector<std::pair<fs::path, std::string>>;
EmitFiles render_jobs(const Sweep& sweep, const EmitPlan& plan, const fs::path& dir, const Launcher& launcher,
                      const SweepOptions& o) {
  const fs::path sweep_file = fs::absolute(sweep.file);
  json points = json::array();
  std::vector<std::string> scripts;
  EmitFiles files;
  for (const SweepPoint* p : plan.points) {
    const SlurmJob job = point_job(sweep, *p, sweep_file, dir, launcher, o);
    scripts.push_back(point_stem(p->index) + ".sbatch");
    files.emplace_back(dir / scripts.back(), sbatch_script(job));
    points.push_back({{"index", p->index}, {"key", point_key(sweep, *p, ResultMode::measured)},
                      {"series", p->series}, {"label", p->label}, {"ranks", job.shape.ranks},
                      {"nodes", job.shape.nodes}, {"script", scripts.back()}});
  }
  files.emplace_back(dir / "submit.sh", submit_script(scripts));
  const json manifest = {{"schema", kSlurmManifestSchema}, {"identity", identity_json(sweep_identity(sweep))},
                         {"file", sweep_file.string()},    {"launcher", launcher.spec()},
                         {"points", points},               {"not_emitted", plan.left_out}};
  files.emplace_back(manifest_path(dir), manifest.dump(2) + "\n");
  return files;
}

// Every file through an exclusive temporary in the folder, renamed into place
// together or none (OutputFiles): an entry of the folder that is a link, a
// FIFO or a folder is refused, never written through.
void write_jobs(const EmitFiles& texts) {
  OutputFiles files;
  for (const auto& [path, text] : texts) files.add_text(path, text, path.extension() != ".json");  // scripts run as ./NAME
  files.commit();
}

}  // namespace

int emit_slurm(const SweepOptions& options) {
  const std::optional<Launcher> launcher = parse_launcher_or_report(options.launcher.empty() ? "srun" : options.launcher);
  if (!launcher) return kExitRefused;
  const std::optional<Sweep> sweep = load_sweep_or_report(options.file, options.max_points);
  if (!sweep) return kExitRefused;
  const fs::path dir = fs::absolute(options.emit_slurm);
  std::string why = emit_folder_problem(dir, sweep->name);
  if (why.empty()) why = output_path_problem(manifest_path(dir));
  const EmitPlan plan = plan_emit(*sweep, options);
  if (why.empty() && plan.points.empty())
    why = "the sweep has no point to measure (" + std::to_string(plan.projected) +
          " projected: they need no cluster, run `ptdp sweep FILE --mode project`)";
  const ConfigErrors bad = script_value_problems(*sweep, plan, dir);
  if (!bad.empty()) print_refused("sweep", bad);
  if (!why.empty()) std::fprintf(stderr, "ptdp sweep: --emit-slurm %s: %s\n", dir.c_str(), why.c_str());
  if (!bad.empty() || !why.empty()) return kExitRefused;
  try {
    const EmitFiles texts = render_jobs(*sweep, plan, dir, *launcher, options);
    fs::create_directories(dir);
    write_jobs(texts);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ptdp sweep: --emit-slurm %s: %s\n", dir.c_str(), e.what());
    return kExitRefused;
  }
  std::printf("ptdp sweep %s: wrote %zu Slurm jobs (launcher: %s) to %s\n", sweep->name.c_str(), plan.points.size(),
              launcher->text().c_str(), dir.c_str());
  if (plan.projected > 0)
    std::printf("  %d points are projected, not emitted: they need no cluster (`ptdp sweep %s --mode project`)\n",
                plan.projected, options.file.c_str());
  for (const auto& left : plan.left_out) std::printf("  not emitted: %s\n", left.c_str());
  std::printf("  submit: sh %s/submit.sh [sbatch options]\n  collect: ptdp sweep %s --collect %s --out RESULT\n",
              dir.c_str(), options.file.c_str(), dir.c_str());
  return kExitOk;
}

}  // namespace ptdp::cli
