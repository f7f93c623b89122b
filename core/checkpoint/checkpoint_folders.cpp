// Which checkpoint folders are ptdp's, and making, checking and removing them;
// see checkpoint_folders.h.
#include "core/checkpoint/checkpoint_folders.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "core/checkpoint/durable_file.h"
#include "core/config/json_read.h"

namespace ptdp {

namespace fs = std::filesystem;

namespace {

nlohmann::json marker_json(int step) { return {{"format", kCheckpointFormat}, {"step", step}}; }

// Whether `path` itself (a link is not followed) is a regular file, or a folder.
bool plain_file(const fs::path& path) {
  std::error_code ec;
  return fs::is_regular_file(fs::symlink_status(path, ec));
}
bool plain_folder(const fs::path& path) {
  std::error_code ec;
  return fs::is_directory(fs::symlink_status(path, ec));
}

// Whether `folder` holds ptdp's marker of `step`.
bool has_marker(const fs::path& folder, int step) {
  const fs::path file = folder / kSaveMarkerName;
  try {
    return plain_file(file) && read_json_file(file) == marker_json(step);
  } catch (const std::exception&) {
    return false;
  }
}

// ptdp's manifest of `step` in `folder`, or nullopt.
std::optional<Manifest> manifest_of_step(const fs::path& folder, int step) {
  const fs::path file = folder / kManifestName;
  if (!plain_file(file)) return std::nullopt;
  try {
    Manifest m = read_manifest(file);
    if (m.step == step) return m;
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

std::optional<SavedFolder> saved_folder(const fs::path& folder) {
  const std::optional<int> step = step_of_folder(folder.filename().string());
  if (!step || !plain_folder(folder)) return std::nullopt;
  const bool finished = plain_file(folder / kManifestName);
  if (has_marker(folder, *step) || (finished && manifest_of_step(folder, *step)))
    return SavedFolder{folder, *step, finished};
  return std::nullopt;
}

// "rank_00003.safetensors" as shard_file_name writes it.
bool is_shard_file_name(const std::string& name) {
  const std::string prefix = "rank_", suffix = ".safetensors";
  if (name.size() <= prefix.size() + suffix.size() || !name.starts_with(prefix) || !name.ends_with(suffix))
    return false;
  const std::string digits = name.substr(prefix.size(), name.size() - prefix.size() - suffix.size());
  return digits.size() <= 9 && digits.find_first_not_of("0123456789") == std::string::npos &&
         shard_file_name(std::stoi(digits)) == name;
}

// A name a save writes in its folder (what its manifest lists, or could).
bool is_save_file_name(const std::string& name) {
  return name == kManifestName || name == kSaveMarkerName || is_shard_file_name(name);
}

// Whether the save whose manifest is `m` (if it has one) wrote `name`, or was
// staging it (StagedFile's ".NAME.tmp.PID.RANDOM").
bool written_by_save(const std::optional<Manifest>& m, const std::string& name) {
  std::string base = name;
  if (name.starts_with(".")) {
    const auto tmp = name.find(".tmp.", 1);
    if (tmp == std::string::npos) return false;
    base = name.substr(1, tmp - 1);
  }
  if (base == kManifestName || base == kSaveMarkerName) return true;
  if (!m) return is_shard_file_name(base);
  return std::any_of(m->shards.begin(), m->shards.end(), [&](const ShardRecord& r) { return r.file == base; });
}

// Why a save of `step` may not write into the existing `folder`, or "".
std::string folder_problem(const fs::path& folder, int step) {
  std::error_code ec;
  const fs::file_status st = fs::symlink_status(folder, ec);
  if (fs::is_symlink(st))
    return folder.string() + " is a symbolic link: ptdp writes a checkpoint only into a folder it makes itself";
  if (!fs::is_directory(st)) return folder.string() + " exists and is not a folder";
  bool empty = true;
  for (const auto& e : fs::directory_iterator(folder, ec)) {
    empty = false;
    if (is_save_file_name(e.path().filename().string()) && !plain_file(e.path()))
      return e.path().string() + " is a symbolic link or not a regular file: a save replaces only regular files";
  }
  if (!empty && !saved_folder(folder))
    return folder.string() + " holds files ptdp did not write (no " + kSaveMarkerName + " or " + kManifestName +
           " of step " + std::to_string(step) + "): a save never writes into a folder it did not make";
  return "";
}

}  // namespace

std::vector<SavedFolder> saved_folders(const fs::path& dir) {
  std::vector<SavedFolder> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (std::optional<SavedFolder> f = saved_folder(e.path())) out.push_back(std::move(*f));
  return out;
}

void remove_saved_folder(const SavedFolder& f) {
  if (!plain_folder(f.path)) return;  // replaced since it was listed: not ours any more
  const std::optional<Manifest> m = f.finished ? manifest_of_step(f.path, f.step) : std::nullopt;
  std::error_code ec;
  fs::remove(f.path / kManifestName, ec);
  std::vector<fs::path> written;
  for (const auto& e : fs::directory_iterator(f.path, ec))
    if (written_by_save(m, e.path().filename().string())) written.push_back(e.path());
  for (const fs::path& p : written) fs::remove(p, ec);
  fs::remove(f.path, ec);  // only when empty: anyone else's file keeps the folder
}

fs::path prepare_save_folder(const fs::path& dir, int step) {
  fs::create_directories(dir);
  const fs::path folder = dir / iteration_folder(step);
  if (::mkdir(folder.c_str(), 0777) != 0) {
    if (errno != EEXIST) throw std::runtime_error("cannot create " + folder.string() + ": " + std::strerror(errno));
    if (const std::string why = folder_problem(folder, step); !why.empty()) throw std::runtime_error(why);
  }
  std::error_code ec;
  fs::remove(folder / kManifestName, ec);  // a stale manifest must not outlive its shards
  write_durably(folder / kSaveMarkerName, marker_json(step).dump() + "\n");  // fsyncs the folder too
  fsync_path(dir, true);                                                      // and the folder's own entry
  return folder;
}

void prune_checkpoints(const fs::path& dir, int step, int keep, const std::vector<int>& replace) {
  std::vector<SavedFolder> finished;
  for (SavedFolder& f : saved_folders(dir)) {
    if (f.step == step) continue;
    if (!f.finished || std::find(replace.begin(), replace.end(), f.step) != replace.end()) remove_saved_folder(f);
    else finished.push_back(std::move(f));
  }
  if (keep <= 0) return;
  std::sort(finished.begin(), finished.end(),
            [](const SavedFolder& a, const SavedFolder& b) { return a.step > b.step; });  // newest first
  for (std::size_t i = static_cast<std::size_t>(keep - 1); i < finished.size(); ++i) remove_saved_folder(finished[i]);
}

std::vector<std::string> save_dir_problems(const fs::path& dir, const std::function<bool(int)>& will_save) {
  std::vector<std::string> out;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return out;
  const fs::path latest = dir / kLatestName;
  if (fs::exists(fs::symlink_status(latest, ec)) && !plain_file(latest))
    out.push_back(latest.string() + " is a symbolic link or not a regular file: a save replaces only a regular file");
  if (fs::exists(fs::symlink_status(dir / kManifestName, ec)))
    out.push_back(dir.string() + " holds " + kManifestName + ": it is a checkpoint folder, not a save directory "
                                 "(save into the folder that holds it, or another)");
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::optional<int> step = step_of_folder(e.path().filename().string());
    if (step && (!plain_folder(e.path()) || will_save(*step)))
      if (std::string why = folder_problem(e.path(), *step); !why.empty()) out.push_back(std::move(why));
  }
  return out;
}

}  // namespace ptdp
