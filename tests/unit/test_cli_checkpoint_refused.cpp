// `ptdp train --load`, `ptdp export --load` and `ptdp train --init-hf` on
// damaged checkpoints and weights, and `--data` files that cannot train: each
// refused with exit status 2 before any work, naming the file (never exit 1
// from the load, a crash, or out of memory reading a device); a save folder
// with planted links refused, the links' targets untouched; --keep keeps the
// user's folders; --overwrite keeps the old checkpoint until the new run's
// first save; a FIFO still serves as --config. The damage keeps the shard's
// size and CRC-32 in the manifest right, so only the deeper checks can see it.
#include <gtest/gtest.h>

#include <cstdio>
#include <functional>
#include <map>

#include "core/checkpoint/hf_gpt2.h"
#include "core/checkpoint/manifest.h"
#include "core/checkpoint/safetensors.h"
#include "core/io/crc32.h"
#include "tests/cli_test_util.h"

namespace ptdp {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr const char* kShard = "rank_00000.safetensors";
using ShardTensors = std::map<std::string, std::vector<float>>;

// A 2-iteration checkpoint (ck) and its Hugging Face export (hf), saved once.
class CliCheckpointRefused : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = std::make_unique<test::ScratchDir>("cli-ckpt-damaged");
    dir_->write("tiny.json", test::tiny_config_json().dump());
    json bytes = test::tiny_config_json();
    bytes["model"]["vocab"] = 256;  // --data trains on bytes
    dir_->write("bytes.json", bytes.dump());
    ASSERT_EQ(ptdp("train --warmup 0 --config tiny.json --iterations 2 --save ck").status, 0);
    ASSERT_EQ(ptdp("export --load ck --out hf").status, 0);
  }
  static void TearDownTestSuite() { dir_.reset(); }

  static fs::path at(const std::string& name) { return dir_->path() / name; }
  static test::Run ptdp(const std::string& args) { return test::run_command(test::ptdp_cli() + " " + args, *dir_); }
  // Under 2 GiB of address space: a file read until memory runs out fails fast instead of exhausting the machine.
  static test::Run bounded_ptdp(const std::string& args) {
    return test::run_command("/bin/sh -c \"ulimit -v 2097152; exec " + test::ptdp_cli() + " " + args + "\"", *dir_);
  }
  // A copy of the saved checkpoint folder, named `name` in the scratch folder.
  static std::string copy(const std::string& name) {
    fs::remove_all(at(name));
    fs::copy(at("ck") / iteration_folder(2), at(name), fs::copy_options::recursive);
    return name;
  }
  // The manifest of `folder` after `edit`, rank 0's record given the shard's present size and CRC-32.
  static void match_manifest(const std::string& folder, const std::function<void(json&)>& edit = {}) {
    json m = json::parse(test::read_file(at(folder) / kManifestName));
    if (edit) edit(m);
    const std::string bytes = test::read_file(at(folder) / kShard);
    char crc[16];
    std::snprintf(crc, sizeof crc, "%08x", static_cast<unsigned>(crc32(bytes.data(), bytes.size())));
    m["shards"][0]["bytes"] = bytes.size();
    m["shards"][0]["crc32"] = crc;
    std::ofstream(at(folder) / kManifestName) << m.dump(1);
  }
  // Rank 0's shard of `folder` rewritten with its tensors (fp32, 1-D) as `edit` leaves them.
  static void rewrite_shard(const std::string& folder, const std::function<void(ShardTensors&)>& edit) {
    ShardTensors tensors;
    const SafetensorsFile f(at(folder) / kShard);
    for (const auto& [name, e] : f.entries()) tensors[name] = f.read_f32(name);
    edit(tensors);
    std::vector<TensorRef> refs;
    for (const auto& [name, v] : tensors) refs.push_back({name, DType::f32, {static_cast<std::int64_t>(v.size())}, v.data()});
    write_safetensors(at(folder) / kShard, refs);
  }
  // `train --load` and `export --load` of `folder`: exit 2, `named` on stderr, nothing exported.
  static void expect_load_refused(const std::string& folder, const std::string& named) {
    const test::Run r = bounded_ptdp("train --warmup 0 --config tiny.json --iterations 4 --load " + folder);
    EXPECT_EQ(r.status, 2) << folder << "\n" << r.err;
    EXPECT_NE(r.err.find(named), std::string::npos) << folder << "\n" << r.err;
    const test::Run e = bounded_ptdp("export --load " + folder + " --out out-" + folder);
    EXPECT_EQ(e.status, 2) << folder << "\n" << e.err;
    EXPECT_NE(e.err.find(named), std::string::npos) << folder << "\n" << e.err;
    EXPECT_FALSE(fs::exists(at("out-" + folder)));
  }
  static inline std::unique_ptr<test::ScratchDir> dir_;
};

// Every refused header of tests/corpus/safetensors as a checkpoint's shard.
TEST_F(CliCheckpointRefused, EveryRefusedShardHeaderExitsTwoNamingTheShard) {
  const fs::path corpus = fs::path(PTDP_SOURCE_DIR) / "tests" / "corpus" / "safetensors";
  for (const auto& entry : fs::directory_iterator(corpus)) {
    const std::string folder = copy("header-" + entry.path().stem().string());
    fs::copy_file(entry.path(), at(folder) / kShard, fs::copy_options::overwrite_existing);
    match_manifest(folder);
    expect_load_refused(folder, folder + "/" + kShard + ": ");
  }
}

TEST_F(CliCheckpointRefused, AShardLackingATensorOrHoldingAnotherCountExitsTwo) {
  const std::string missing = copy("tensor-missing");
  rewrite_shard(missing, [](ShardTensors& t) { t.erase("master/final_ln.bias/0"); });
  match_manifest(missing);
  expect_load_refused(missing, "tensor \"master/final_ln.bias/0\" (a piece the manifest lists) is missing");
  const std::string count = copy("tensor-count");
  rewrite_shard(count, [](ShardTensors& t) { t["exp_avg/final_ln.bias/0"].resize(3); });
  match_manifest(count);
  expect_load_refused(count, "tensor \"exp_avg/final_ln.bias/0\" holds 3 elements; the manifest's piece has count 64");
}

// A piece that splits a dimension into more parts than it has rows, its
// tensors of the piece's size: the loader divided by a part of zero rows (SIGFPE).
TEST_F(CliCheckpointRefused, ASplitIntoMorePartsThanItsDimensionExitsTwo) {
  const std::string folder = copy("split-too-fine");
  std::int64_t count = 0;
  match_manifest(folder, [&](json& m) {
    for (json& p : m["shards"][0]["pieces"])
      if (p["param"] == "layers.0.fc2.weight") {
        const std::int64_t rows = p["full_shape"][0], numel = rows * p["full_shape"][1].get<std::int64_t>();
        count = numel / (2 * rows);
        p.update({{"dim", 0}, {"parts", 2 * rows}, {"index", 0}, {"offset", 0}, {"count", count}});
      }
  });
  ASSERT_GT(count, 0);
  rewrite_shard(folder, [&](ShardTensors& t) {
    for (const char* kind : {"master/", "exp_avg/", "exp_avg_sq/"}) t[std::string(kind) + "layers.0.fc2.weight/0"].resize(count);
  });
  match_manifest(folder);
  expect_load_refused(folder, "/parts: must divide full_shape[0]=64 into equal parts of at least one row");
}

TEST_F(CliCheckpointRefused, AnEmptyShardListOrAKeyNamedTwiceExitsTwo) {
  const std::string empty = copy("shards-empty");
  json m = json::parse(test::read_file(at(empty) / kManifestName));
  m["shards"] = json::array();
  std::ofstream(at(empty) / kManifestName) << m.dump();
  expect_load_refused(empty, "/shards: must list at least one shard file");
  const std::string twice = copy("step-twice");
  const std::string text = test::read_file(at(twice) / kManifestName);
  std::ofstream(at(twice) / kManifestName) << text.substr(0, text.find("\"step\"")) << "\"step\": 1,\n "
                                           << text.substr(text.find("\"step\""));
  expect_load_refused(twice, "/step: the key \"step\" appears twice in one object");
}

// A device as a shard or as `latest` is refused, never read until memory runs out.
TEST_F(CliCheckpointRefused, ADeviceIsNeverReadAsACheckpointFile) {
  const std::string shard = copy("shard-device");
  fs::remove(at(shard) / kShard);
  fs::create_symlink("/dev/zero", at(shard) / kShard);
  expect_load_refused(shard, shard + "/" + kShard + " is a device, not a regular file");
  fs::create_directories(at("latest-device"));
  fs::copy(at("ck") / iteration_folder(2), at("latest-device") / iteration_folder(2), fs::copy_options::recursive);
  fs::create_symlink("/dev/zero", at("latest-device") / kLatestName);
  expect_load_refused("latest-device", "latest-device/latest is a device, not a regular file");
}

TEST_F(CliCheckpointRefused, InitHfRefusesDamagedWeightsAndConfigsWithExitTwo) {
  const auto expect_refused = [](const std::string& folder, const std::string& named) {
    const test::Run r = bounded_ptdp("train --warmup 0 --config tiny.json --iterations 1 --init-hf " + folder);
    EXPECT_EQ(r.status, 2) << folder << "\n" << r.err;
    EXPECT_NE(r.err.find(named), std::string::npos) << folder << "\n" << r.err;
  };
  const auto hf_copy = [](const std::string& name) {
    fs::remove_all(at(name));
    fs::copy(at("hf"), at(name), fs::copy_options::recursive);
    return name;
  };
  const fs::path corpus = fs::path(PTDP_SOURCE_DIR) / "tests" / "corpus" / "safetensors";
  for (const char* bad : {"header_length_zero", "header_key_twice", "offsets_overlap", "dtype_unknown", "shape_negative"}) {
    const std::string folder = hf_copy(std::string("hf-") + bad);
    fs::copy_file(corpus / (std::string(bad) + ".safetensors"), at(folder) / kHfWeightsFile,
                  fs::copy_options::overwrite_existing);
    expect_refused(folder, folder + "/" + kHfWeightsFile + ": ");
  }
  const std::string device = hf_copy("hf-device");
  fs::remove(at(device) / kHfWeightsFile);
  fs::create_symlink("/dev/zero", at(device) / kHfWeightsFile);
  expect_refused(device, device + "/model.safetensors is a device, not a regular file");
  const std::string twice = hf_copy("hf-key-twice");
  const std::string config = test::read_file(at(twice) / kHfConfigFile);
  std::ofstream(at(twice) / kHfConfigFile) << "{\"n_embd\": 32, " << config.substr(config.find('{') + 1);
  expect_refused(twice, "config.json: /n_embd: the key \"n_embd\" appears twice in one object");
}

TEST_F(CliCheckpointRefused, DataFilesThatCannotTrainExitTwoNamingData) {
  dir_->write("empty.txt", "");
  dir_->write("short.txt", "sixteen bytes!!!");  // model.seq_len + 1 = 17 are needed
  ASSERT_EQ(test::run_command("mkfifo data.fifo", *dir_).status, 0);
  const std::map<std::string, std::string> cases = {
      {"empty.txt", "--data: empty.txt has 0 bytes, fewer than model.seq_len + 1 = 17"},
      {"short.txt", "--data: short.txt has 16 bytes, fewer than model.seq_len + 1 = 17"},
      {"/dev/zero", "--data: /dev/zero is a device, not a regular file"},
      {"data.fifo", "--data: data.fifo is a FIFO, not a regular file"}};
  for (const auto& [file, words] : cases) {
    const test::Run r = bounded_ptdp("train --warmup 0 --config bytes.json --iterations 1 --out r.json --data " + file);
    EXPECT_EQ(r.status, 2) << file << "\n" << r.err;
    EXPECT_NE(r.err.find(words), std::string::npos) << file << "\n" << r.err;
    EXPECT_FALSE(fs::exists(at("r.json")));
  }
  const test::Run e = bounded_ptdp("export --load ck --out data-out --data /dev/zero");
  EXPECT_EQ(e.status, 2) << e.err;
  EXPECT_NE(e.err.find("--data: /dev/zero is a device, not a regular file"), std::string::npos) << e.err;
}

// Reading a config from a FIFO waits for its writer, as Unix does: `--config <(...)` keeps working.
TEST_F(CliCheckpointRefused, AFifoStillServesAsTheConfig) {
  ASSERT_EQ(test::run_command("mkfifo config.fifo", *dir_).status, 0);
  const test::Run r = test::run_command("/bin/sh -c \"cat tiny.json > config.fifo & exec " + test::ptdp_cli() +
                                            " train --warmup 0 --iterations 1 --config config.fifo\"",
                                        *dir_);
  EXPECT_EQ(r.status, 0) << r.err;
}

TEST_F(CliCheckpointRefused, PlantedLinksInTheSaveFolderAreRefusedBeforeAnyWork) {
  const fs::path target = dir_->write("precious.txt", "the user's bytes\n");
  const auto expect_refused = [&](const std::string& save, const std::string& link) {
    const test::Run r = ptdp("train --warmup 0 --config tiny.json --iterations 2 --out r.json --save " + save);
    EXPECT_EQ(r.status, 2) << save << "\n" << r.err;
    EXPECT_NE(r.err.find("--save: " + link + " is a symbolic link"), std::string::npos) << r.err;
    EXPECT_EQ(test::read_file(target), "the user's bytes\n");
    EXPECT_FALSE(fs::exists(at("r.json")));
  };
  fs::create_directories(at("links-latest"));
  fs::create_symlink(target, at("links-latest") / kLatestName);
  expect_refused("links-latest", "links-latest/latest");
  fs::create_directories(at("links-iter"));
  fs::create_directories(at("elsewhere"));
  fs::create_symlink(at("elsewhere"), at("links-iter") / iteration_folder(2));
  expect_refused("links-iter", "links-iter/iter_0000002");
  EXPECT_TRUE(fs::is_empty(at("elsewhere")));
  fs::create_directories(at("links-shard"));
  copy("links-shard/iter_0000002");
  fs::remove(at("links-shard/iter_0000002") / kShard);
  fs::create_symlink(target, at("links-shard/iter_0000002") / kShard);
  fs::remove(at("links-shard/iter_0000002") / kManifestName);  // an unfinished save of this step
  expect_refused("links-shard", "links-shard/iter_0000002/rank_00000.safetensors");
}

// --keep 1 keeps iter_notes and a folder named like a checkpoint that ptdp
// did not make; a run that would save into such a folder is refused.
TEST_F(CliCheckpointRefused, KeepRemovesNoFolderOfTheUsers) {
  fs::create_directories(at("keep/iter_notes"));
  dir_->write("keep/iter_notes/notes.txt", "mine");
  fs::create_directories(at("keep") / iteration_folder(9));
  dir_->write("keep/" + iteration_folder(9) + "/data.txt", "mine");
  const std::string train = "train --warmup 0 --config tiny.json --save keep --save-every 1 --keep 1 ";
  const test::Run r = ptdp(train + "--iterations 3");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(test::read_file(at("keep/iter_notes/notes.txt")), "mine");
  EXPECT_EQ(test::read_file(at("keep") / iteration_folder(9) / "data.txt"), "mine");
  EXPECT_FALSE(fs::exists(at("keep") / iteration_folder(2)));
  EXPECT_TRUE(fs::exists(at("keep") / iteration_folder(3) / kManifestName));
  const test::Run into = ptdp(train + "--iterations 9 --load keep");
  EXPECT_EQ(into.status, 2) << into.err;
  EXPECT_NE(into.err.find("--save: keep/iter_0000009 holds files ptdp did not write"), std::string::npos) << into.err;
  EXPECT_EQ(test::read_file(at("keep") / iteration_folder(9) / "data.txt"), "mine");
}

// --overwrite: a run killed before its first save leaves the other run's
// checkpoint loadable (it went before training, once); the one --load reads
// stays; a run that saves replaces the other run's checkpoints.
TEST_F(CliCheckpointRefused, OverwriteKeepsTheOldCheckpointUntilTheNewOneIsDurable) {
  const std::string train = "train --warmup 0 --config tiny.json ";
  ASSERT_EQ(ptdp(train + "--iterations 3 --save over").status, 0);
  EXPECT_NE(ptdp(train + "--iterations 4 --save over --overwrite --fault kill:0:1").status, 0);
  EXPECT_EQ(resolve_checkpoint(at("over")), at("over") / iteration_folder(3));
  EXPECT_NE(ptdp(train + "--iterations 6 --load over --save over --overwrite --fault kill:0:4").status, 0);
  const test::Run loads = ptdp(train + "--iterations 4 --load over");
  EXPECT_EQ(loads.status, 0) << loads.err;
  const test::Run replaced = ptdp(train + "--iterations 2 --save over --overwrite");
  ASSERT_EQ(replaced.status, 0) << replaced.err;
  EXPECT_EQ(test::read_file(at("over") / kLatestName), iteration_folder(2) + "\n");
  EXPECT_FALSE(fs::exists(at("over") / iteration_folder(3)));
}

}  // namespace
}  // namespace ptdp
