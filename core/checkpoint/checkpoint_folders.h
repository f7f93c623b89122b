// The folders of a save directory that ptdp owns (docs/checkpoint-format.md,
// "Which folders are ptdp's"): a save first writes a marker into
// DIR/iter_NNNNNNN, so an unfinished save is recognised as ptdp's; a finished
// one has ptdp's manifest for that step. Only such folders are pruned, and
// only the files ptdp wrote in them are removed; a folder that is a symbolic
// link, or one ptdp did not make, is never written into or removed.
#pragma once
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/checkpoint/manifest.h"

namespace ptdp {

// Written first into a checkpoint folder by a save: {"format", "step"}.
inline constexpr const char* kSaveMarkerName = "ptdp_save.json";

// A checkpoint folder that ptdp's own save made.
struct SavedFolder {
  std::filesystem::path path;
  int step = 0;
  bool finished = false;  // it holds a manifest (a save writes it last)
};

// Every folder of `dir` a ptdp save made: named iteration_folder(step), a real
// folder (not a link), holding ptdp's marker of that step (or, saved before
// saves wrote one, ptdp's manifest of that step). Nothing else (iter_notes, a
// link, a folder of the user's) is listed. Reads only small regular files: a
// manifest only where there is no marker.
std::vector<SavedFolder> saved_folders(const std::filesystem::path& dir);

// Removes what the save of `f` wrote: the manifest first (a folder never loads
// half-removed), then the marker, the shards (those the manifest lists, else
// the files named rank_NNNNN.safetensors) and their staging temporaries; then
// the folder, if nothing else is left in it.
void remove_saved_folder(const SavedFolder& f);

// DIR/iteration_folder(step) made ready for a save (rank 0, before any shard):
// created, or taken over when ptdp made it; a stale manifest removed (a link
// is removed, never followed) and the marker written, durably. Throws
// std::runtime_error naming the folder when it is a link, not a folder, a
// non-empty folder ptdp did not make, or holds a link under a name a save writes.
std::filesystem::path prepare_save_folder(const std::filesystem::path& dir, int step);

// After the save of `step` is durable (manifest and latest written): removes
// unfinished saves of other steps, the checkpoints of steps in `replace` (the
// other run's, --overwrite) and, with keep > 0, all but the newest `keep`
// finished checkpoints (this one counted).
void prune_checkpoints(const std::filesystem::path& dir, int step, int keep, const std::vector<int>& replace);

// Why `dir` cannot take this run's saves, checked before any work (empty when
// it can, or does not exist yet): `latest` or an iter_NNNNNNN entry that is a
// link or of the wrong kind; `dir` itself a checkpoint folder (manifest.json);
// a folder the run will write (`will_save(step)`) that ptdp did not make, or
// that holds a link under a name a save writes.
std::vector<std::string> save_dir_problems(const std::filesystem::path& dir, const std::function<bool(int)>& will_save);

}  // namespace ptdp
