// Reading a saved checkpoint by full parameter: the pieces of one parameter,
// from whichever shards hold them, put together into the whole (unsharded)
// tensor by each piece's geometry (Param::full_index). The loader uses it to
// reshard into any (t, p, d); a converter (e.g. to Hugging Face GPT-2) can
// read the full weights with it.
#pragma once
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/checkpoint/manifest.h"
#include "core/checkpoint/safetensors.h"

namespace ptdp {

class CheckpointReader {
 public:
  // `folder`: a checkpoint folder or a save directory (resolve_checkpoint).
  // Throws std::runtime_error / JsonRefused naming the file.
  explicit CheckpointReader(const std::filesystem::path& folder);

  const std::filesystem::path& folder() const { return folder_; }
  const Manifest& manifest() const { return manifest_; }
  // Every parameter the checkpoint holds, with its full shape.
  std::map<std::string, Shape> parameters() const;
  // The full tensor (row-major, fp32) of `kind` ("master": the fp32 weights,
  // "exp_avg", "exp_avg_sq": AdamW's moments) of parameter `param`. Throws
  // std::runtime_error naming the checkpoint when a shard is missing, its size
  // differs from the manifest's, or the pieces leave elements uncovered.
  std::vector<float> full(const std::string& kind, const std::string& param);
  // Bytes of the shard files read so far.
  std::int64_t bytes_read() const { return bytes_read_; }

 private:
  const SafetensorsFile& shard(const ShardRecord& r);

  std::filesystem::path folder_;
  Manifest manifest_;
  std::map<std::string, std::unique_ptr<SafetensorsFile>> open_;
  std::int64_t bytes_read_ = 0;
};


}  // namespace ptdp
