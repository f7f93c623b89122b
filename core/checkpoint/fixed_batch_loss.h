// ptdp's own loss on a fixed batch with given full weights: the number an
// independent implementation holding the same weights must reproduce (the
// Hugging Face export writes it beside the weights). Computed by the fp32 CPU
// reference forward on one rank, without dropout (ptdp's forward has none).
// Letters: b sequences, s sequence length.
#pragma once
#include <cstdint>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/data/token_source.h"
#include "core/model/full_params.h"

namespace ptdp {

struct FixedBatch {
  int batch = 0;    // b
  int seq_len = 0;  // s
  std::vector<std::int32_t> tokens, targets;  // (b, s) each, row-major; targets[i] is the token after tokens[i]
};

// Samples 0..b-1 of `data`: the first s tokens of each as inputs, the last s as targets.
FixedBatch fixed_batch(const TokenSource& data, int batch, int seq_len);

// The mean cross-entropy over the b·s tokens of `batch` of the GPT `model`
// with weights `params` (full, by ptdp name; every parameter of `model`).
// `model.seq_len` must be the batch's s.
double fixed_batch_loss(const Model& model, const FullParams& params, const FixedBatch& batch);

// {"tokens": [[...]], "targets": [[...]]}: the batch as (b, s) arrays.
nlohmann::json to_json(const FixedBatch& batch);

}  // namespace ptdp
