// Replays the checkpoint readers' refused inputs (tests/corpus/README.md):
// manifests (read_manifest), safetensors files (SafetensorsFile: the
// checkpoint shards' and the Hugging Face weights' reader) and Hugging Face
// config.json files (the strict reader, then check_hf_gpt2_config against a
// tiny GPT-2). Each file is refused with its reader's exception and a message
// naming the file and the field or rule; a file without an expected message
// here, or a message without its file, fails the test. The JSON readers also
// refuse every file of corpus/any. The commands turn these refusals into exit
// status 2 (tests/unit/test_cli_checkpoint_refused.cpp runs them).
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "core/checkpoint/hf_gpt2.h"
#include "core/checkpoint/manifest.h"
#include "core/checkpoint/safetensors.h"
#include "core/config/json_read.h"

namespace ptdp {
namespace {

namespace fs = std::filesystem;

fs::path checkpoint_corpus() { return fs::path(PTDP_SOURCE_DIR) / "tests" / "corpus"; }

// The model the Hugging Face configs are checked against (tests/cli_test_util.h's tiny one).
Model corpus_gpt2() {
  Model m;
  m.layers = 2, m.hidden = 64, m.heads = 4, m.seq_len = 16, m.vocab = 128;
  return m;
}

// The refusal's message ("" when `read` accepted the file); any other exception fails the test.
template <class Refusal, class Read>
std::string refusal_of(const Read& read, const fs::path& f) {
  try {
    read(f);
  } catch (const Refusal& e) {
    return e.what();
  }
  return "";
}

std::string refused_manifest(const fs::path& f) {
  return refusal_of<JsonRefused>([](const fs::path& p) { (void)read_manifest(p); }, f);
}
std::string refused_safetensors(const fs::path& f) {
  return refusal_of<SafetensorsError>([](const fs::path& p) { (void)SafetensorsFile(p); }, f);
}
std::string refused_hf_config(const fs::path& f) {
  try {
    const ConfigErrors errors = check_hf_gpt2_config(read_json_file(f), corpus_gpt2(), f.string());
    std::string all;
    for (const ConfigError& e : errors) all += e.field + ": " + e.message + "\n";
    return all;
  } catch (const JsonRefused& e) {
    return e.what();
  }
}

// "reader/file" -> a piece of the message its refusal must hold.
const std::map<std::string, std::string>& checkpoint_expected() {
  static const std::map<std::string, std::string> all = {
      {"manifest/parts_exceed_dimension.json",
       "parts_exceed_dimension.json: /shards/0/pieces/0/parts: must divide full_shape[1]=2 into equal parts of at least one row"},
      {"manifest/parts_zero.json", "/shards/0/pieces/0/parts: must divide full_shape[0]=4"},
      {"manifest/parts_not_dividing.json", "/shards/0/pieces/0/parts: must divide full_shape[0]=4"},
      {"manifest/unsplit_with_parts.json", "/parts: must be 1 for a parameter that is not split (dim -1)"},
      {"manifest/dim_out_of_range.json", "/shards/0/pieces/0/dim: must be -1 (not split) or a dimension of full_shape, 0 to 1"},
      {"manifest/index_out_of_range.json", "/shards/0/pieces/0/index: must be in [0, parts)"},
      {"manifest/shards_empty.json", "shards_empty.json: /shards: must list at least one shard file"},
      {"manifest/shape_product_overflows.json",
       "/shards/0/pieces/0/full_shape/1: must be a size of at least 1, with the shape's product at most 2^40 elements"},
      {"manifest/shape_zero.json", "/shards/0/pieces/0/full_shape/0: must be a size of at least 1"},
      {"manifest/shape_empty.json", "/shards/0/pieces/0/full_shape: must have at least one dimension"},
      {"manifest/offset_beyond_part.json", "/shards/0/pieces/0/offset: must be in [0, 8]"},
      {"manifest/count_overflows_int64.json", "/shards/0/pieces/0/count: must be in [0, 7]"},
      {"manifest/coverage_gap.json", "/shards: the pieces of w (1 part(s) of 8 elements) leave element 7 of part 0 uncovered"},
      {"manifest/part_without_piece.json", "/shards: the pieces of w (2 part(s) of 4 elements) cover only 1 of its parts"},
      {"manifest/pieces_disagree_on_shape.json", "/shards/0/pieces/1: gives w another full_shape, dim or parts"},
      {"manifest/file_outside_folder.json", "/shards/0/file: must be a plain file name inside the checkpoint's folder"},
      {"manifest/file_twice.json", "/shards/1/file: names the file of /shards/0 again"},
      {"manifest/crc_not_hex.json", "/shards/0/crc32: must be 8 hexadecimal digits"},
      {"manifest/step_negative.json", "step_negative.json: /step: must not be negative"},
      {"manifest/step_string.json", "/step: must be an integer"},
      {"manifest/step_twice.json", "step_twice.json: /step: the key \"step\" appears twice in one object"},
      {"manifest/bytes_negative.json", "/shards/0/bytes: must not be negative"},
      {"manifest/rank_negative.json", "/shards/0/rank: must not be negative"},
      {"manifest/format_other.json", "/format: must be \"ptdp.checkpoint/1\""},
      {"manifest/loss_scale_zero.json", "/loss_scaler/scale: must be positive"},
      {"manifest/param_empty.json", "/shards/0/pieces/0/param: must name a parameter"},
      {"safetensors/header_length_zero.safetensors", "header_length_zero.safetensors: announces an empty header (length 0)"},
      {"safetensors/header_length_2_pow_63.safetensors", "announces a 9223372036854775808-byte header in a 70-byte file"},
      {"safetensors/header_past_the_file.safetensors", "announces a 1000-byte header in a 70-byte file"},
      {"safetensors/shorter_than_its_length.safetensors", "is shorter than a safetensors header"},
      {"safetensors/header_not_json.safetensors", "header_not_json.safetensors: header is not JSON"},
      {"safetensors/header_not_an_object.safetensors", "header is not a JSON object"},
      {"safetensors/header_key_twice.safetensors", "/w: the key \"w\" appears twice in one object"},
      {"safetensors/offsets_outside_the_file.safetensors", "tensor \"w\" lies outside the file's 8 data bytes"},
      {"safetensors/offsets_reversed.safetensors", "tensor \"w\" lies outside the file's 8 data bytes"},
      {"safetensors/offsets_overlap.safetensors", "has tensors whose bytes overlap"},
      {"safetensors/offset_beyond_uint64.safetensors", "tensor \"w\" has offsets that are not byte positions"},
      {"safetensors/dtype_unknown.safetensors", "tensor \"w\" has dtype \"Q8\", not one of F32, F64, BF16, F16, I32"},
      {"safetensors/shape_negative.safetensors", "tensor \"w\" has a shape entry that is not a size"},
      {"safetensors/shape_overflows_64_bits.safetensors", "tensor \"w\" has more than 2^40 elements"},
      {"safetensors/shape_needs_other_bytes.safetensors", "tensor \"w\" holds 8 bytes, its shape needs 12"},
      {"safetensors/metadata_not_a_string.safetensors", "__metadata__.format is not a string"},
      {"safetensors/entry_without_offsets.safetensors", "tensor \"w\" needs dtype, shape and data_offsets"},
      {"hf_config/n_embd_twice.json", "n_embd_twice.json: /n_embd: the key \"n_embd\" appears twice in one object"},
      {"hf_config/n_embd_string.json", "n_embd_string.json: n_embd: n_embd must be an integer (got \"64\")"},
      {"hf_config/n_layer_missing.json", "n_layer_missing.json: n_layer: n_layer is missing"},
      {"hf_config/n_layer_2_pow_40.json", "n_layer=1099511627776 but model.layers=2"},
      {"hf_config/n_layer_overflows_double.json", "/n_layer: the number 1e400 overflows a double"},
      {"hf_config/n_positions_short.json", "n_positions=8 is less than model.seq_len=16"},
      {"hf_config/n_head_other.json", "n_head=8 but model.heads=4"},
      {"hf_config/n_inner_other.json", "n_inner=100 (null: 4·n_embd) but the model's MLP size"},
      {"hf_config/activation_relu.json", "activation_function=\"relu\" is not ptdp's GeLU"},
      {"hf_config/untied_embeddings.json", "tie_word_embeddings=false: ptdp's output layer is the word embedding"},
      {"hf_config/model_type_llama.json", "model_type=\"llama\": only GPT-2"},
  };
  return all;
}

const std::map<std::string, std::string (*)(const fs::path&)>& checkpoint_readers() {
  static const std::map<std::string, std::string (*)(const fs::path&)> all = {
      {"manifest", refused_manifest}, {"safetensors", refused_safetensors}, {"hf_config", refused_hf_config}};
  return all;
}

std::set<std::string> corpus_files(const fs::path& dir) {
  std::set<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) out.insert(e.path().filename().string());
  return out;
}

TEST(InputCorpusCheckpoint, EveryFileIsRefusedByItsReaderNamingWhereAndWhy) {
  std::size_t replayed = 0;
  for (const auto& [name, refused] : checkpoint_readers())
    for (const std::string& file : corpus_files(checkpoint_corpus() / name)) {
      const std::string key = name + "/" + file;
      const auto want = checkpoint_expected().find(key);
      if (want == checkpoint_expected().end()) {
        ADD_FAILURE() << key << " has no expected message in this test";
        continue;
      }
      const std::string got = refused(checkpoint_corpus() / name / file);
      EXPECT_NE(got, "") << key << " was accepted";
      EXPECT_NE(got.find((checkpoint_corpus() / name / file).string()), std::string::npos) << key << ": " << got;
      EXPECT_NE(got.find(want->second), std::string::npos) << key << " refused with:\n" << got;
      ++replayed;
    }
  EXPECT_EQ(replayed, checkpoint_expected().size()) << "an expected message names a file the corpus lacks";
}

// corpus/any (not JSON, nesting, overflowing numbers, not an object): refused, the file named.
TEST(InputCorpusCheckpoint, TheJsonReadersRefuseTheFilesOfAny) {
  for (const std::string& file : corpus_files(checkpoint_corpus() / "any"))
    for (const auto reader : {refused_manifest, refused_hf_config}) {
      const std::string got = reader(checkpoint_corpus() / "any" / file);
      EXPECT_NE(got.find(file + ": "), std::string::npos) << "any/" << file << " refused with: " << got;
    }
}

}  // namespace
}  // namespace ptdp
