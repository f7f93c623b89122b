// --save and --load of `ptdp train`: option checks and the run's checkpoints.
#include "endtoend/train_checkpoint.h"

#include <cstdio>

#include "core/checkpoint/checkpoint_folders.h"
#include "core/checkpoint/durable_file.h"
#include "core/io/staged_file.h"

namespace ptdp::cli {

namespace {

namespace fs = std::filesystem;

// The save directory is the one --load reads from (or its parent, a DIR/iter_N): a resumed run.
fs::path folder_path(const std::string& p) {
  std::error_code ec;
  fs::path out = fs::weakly_canonical(p, ec);
  return out.has_filename() ? out : out.parent_path();
}

bool continues_load(const TrainArgs& a) {
  if (a.load.empty() || a.save.empty()) return false;
  const fs::path save = folder_path(a.save), load = folder_path(a.load);
  return save == load || save == load.parent_path();
}

// Whether the run saves after `done` iterations: every --save-every, and at the last.
bool saves_after(const TrainArgs& a, int done) {
  return done == a.iterations || (a.save_every > 0 && done % a.save_every == 0);
}

// --save's problems; `start`: the iterations the loaded checkpoint has done (0 without --load).
ConfigErrors check_save(const TrainArgs& a, int start) {
  ConfigErrors e;
  if (a.save_every < 0) e.push_back({"--save-every", "--save-every must not be negative (0: save at the end only)"});
  if (a.keep < 0) e.push_back({"--keep", "--keep must not be negative (0: keep every checkpoint)"});
  if (a.save.empty()) {
    if (a.save_every > 0 || a.keep > 0 || a.overwrite)
      e.push_back({"--save", "--save-every, --keep and --overwrite need --save DIR"});
    return e;
  }
  if (fs::exists(a.save) && !fs::is_directory(a.save)) {
    e.push_back({"--save", "--save=" + a.save + " exists and is not a folder"});
    return e;
  }
  const int lowest = a.iterations == 0 ? 0 : start + 1;  // --iterations 0 saves step 0, the initial weights
  const auto will_save = [&](int step) { return step >= lowest && step <= a.iterations && saves_after(a, step); };
  for (std::string& why : save_dir_problems(a.save, will_save)) e.push_back({"--save", std::move(why)});
  if (!a.overwrite && !continues_load(a) && holds_checkpoint(a.save))
    e.push_back({"--save", "--save=" + a.save + " holds another run's checkpoint; --overwrite replaces it once this "
                           "run's first save is durable, --load " + a.save + " continues it"});
  return e;
}

// --overwrite: the steps of the other run's checkpoints in --save, removed once
// this run's first save is durable; never the checkpoint --load reads.
std::vector<int> replaced_checkpoints(const TrainArgs& a) {
  std::vector<int> steps;
  if (a.save.empty() || !a.overwrite || continues_load(a)) return steps;
  fs::path loaded;
  if (!a.load.empty()) loaded = resolve_checkpoint(a.load);
  for (const SavedFolder& f : saved_folders(a.save))
    if (loaded.empty() || !same_file(f.path, loaded)) steps.push_back(f.step);
  return steps;
}

double gbs(std::optional<double> bytes, double seconds) {
  return bytes && seconds > 0 ? *bytes / seconds / 1e9 : 0.0;
}

}  // namespace

ConfigErrors check_checkpoint_args(const TrainArgs& a, const Config& cfg) {
  ConfigErrors e, load;
  int start = 0;
  if (!a.load.empty()) {
    if (!a.init_hf.empty())
      e.push_back({"--init-hf", "--init-hf and --load both give the starting weights: name one"});
    load = checkpoint_problems(a.load, cfg, "--load");
    if (load.empty()) {
      start = read_manifest(resolve_checkpoint(a.load) / kManifestName).step;
      if (start >= a.iterations)
        e.push_back({"--iterations", "--iterations=" + std::to_string(a.iterations) + " counts from the start: the "
                                     "checkpoint has done " + std::to_string(start) + ", so ask for more"});
    }
  }
  ConfigErrors save = check_save(a, start);
  save.insert(save.end(), e.begin(), e.end());
  save.insert(save.end(), load.begin(), load.end());
  return save;
}

CheckpointRun::CheckpointRun(const TrainArgs& args, Trainer& trainer, Communicator& host, std::string data)
    : args_(args), trainer_(trainer), host_(host), data_(std::move(data)) {}

int CheckpointRun::load() {
  if (host_.rank() == 0) replace_ = replaced_checkpoints(args_);  // before anything is loaded or saved
  if (args_.load.empty()) return 0;
  Manifest m;
  loaded_ = load_checkpoint(trainer_.training_state(), host_, args_.load, &m);
  if (host_.rank() == 0)
    std::printf("ptdp train: loaded %s (step %d, %.1f MiB in %.3f s); continuing at iteration %d\n",
                loaded_->folder.c_str(), m.step, static_cast<double>(loaded_->bytes_total) / (1 << 20),
                loaded_->seconds, m.step + 1);
  return m.step;
}

void CheckpointRun::after_iteration(int it) {
  if (!args_.save.empty() && saves_after(args_, it + 1)) save(it + 1);
}

void CheckpointRun::save_initial() {
  if (!args_.save.empty()) save(0);
}

void CheckpointRun::save(int step) {
  saves_.push_back(save_checkpoint(trainer_.training_state(), host_, args_.save, step, {args_.keep, replace_}, data_));
  replace_.clear();  // the other run's checkpoints went with this run's first durable save
  if (host_.rank() == 0)
    std::printf("ptdp train: saved %s (%.1f MiB in %.3f s)\n", saves_.back().folder.c_str(),
                static_cast<double>(saves_.back().bytes_total) / (1 << 20), saves_.back().seconds);
}

std::optional<CheckpointMetrics> CheckpointRun::figures() const {
  if (saves_.empty() && !loaded_) return std::nullopt;
  CheckpointMetrics f;
  const CheckpointIo& any = saves_.empty() ? *loaded_ : saves_.front();
  f.bytes_total = any.bytes_total;
  f.bytes_per_rank_max = any.bytes_max;
  f.filesystem = {{"path", any.folder.string()}, {"type", filesystem_type(any.folder)}};
  if (!saves_.empty()) {
    double total = 0;
    for (const CheckpointIo& s : saves_) total += s.seconds;
    f.save_s = total / static_cast<double>(saves_.size());
    f.save_gbs = gbs(static_cast<double>(any.bytes_total), *f.save_s);
    f.save_gbs_per_rank = gbs(static_cast<double>(any.bytes_max), *f.save_s);
    f.every = args_.save_every > 0 ? args_.save_every : args_.iterations;
  }
  if (loaded_) {
    f.load_s = loaded_->seconds;
    f.load_gbs = gbs(static_cast<double>(loaded_->bytes_total), loaded_->seconds);
    f.load_gbs_per_rank = gbs(static_cast<double>(loaded_->bytes_max), loaded_->seconds);
  }
  return f;
}

}  // namespace ptdp::cli
