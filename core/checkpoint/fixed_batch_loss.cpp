// A fixed batch and ptdp's loss on it; see fixed_batch_loss.h.
#include "core/checkpoint/fixed_batch_loss.h"

#include <stdexcept>

#include "core/comm/single_rank.h"
#include "core/kernels/cpu/cpu_ops.h"

namespace ptdp {

FixedBatch fixed_batch(const TokenSource& data, int batch, int seq_len) {
  FixedBatch out{batch, seq_len, {}, {}};
  std::vector<std::int32_t> sample(static_cast<std::size_t>(seq_len) + 1);
  for (int i = 0; i < batch; ++i) {
    data.sample(i, seq_len, sample.data());
    out.tokens.insert(out.tokens.end(), sample.begin(), sample.end() - 1);
    out.targets.insert(out.targets.end(), sample.begin() + 1, sample.end());
  }
  return out;
}

double fixed_batch_loss(const Model& model, const FullParams& params, const FixedBatch& batch) {
  if (model.seq_len != batch.seq_len)
    throw std::invalid_argument("a batch of sequences of " + std::to_string(batch.seq_len) +
                                " tokens for a model of seq_len " + std::to_string(model.seq_len));
  CpuAllocator alloc;
  CpuOps ops(alloc);
  SingleRankCommunicator tp;
  Plan plan;  // one rank: t = p = d = 1, the whole batch one micro-batch
  plan.micro_batch = plan.global_batch = batch.batch;
  plan.precision = Precision::fp32;
  ModelContext ctx{ops, tp, model, plan};
  RankModel rank(ctx, 0);
  load_full_params(rank, ops, params);
  const Shape shape{batch.batch, batch.seq_len};
  MicroBatch mb{ops.empty(shape, DType::i32), ops.empty(shape, DType::i32)};
  ops.upload_i32(batch.tokens.data(), mb.tokens);
  ops.upload_i32(batch.targets.data(), mb.targets);
  ChunkActs acts;
  const Tensor losses = rank.chunk(0).forward(mb, Tensor{}, acts);  // (b·s) fp32
  std::vector<float> host(static_cast<std::size_t>(losses.numel()));
  ops.download_f32(losses, host.data());
  double sum = 0;
  for (float l : host) sum += l;
  return sum / static_cast<double>(host.size());
}

nlohmann::json to_json(const FixedBatch& batch) {
  nlohmann::json tokens = nlohmann::json::array(), targets = nlohmann::json::array();
  for (int i = 0; i < batch.batch; ++i) {
    const auto row = static_cast<std::ptrdiff_t>(i) * batch.seq_len;
    tokens.push_back(std::vector<std::int32_t>(batch.tokens.begin() + row, batch.tokens.begin() + row + batch.seq_len));
    targets.push_back(
        std::vector<std::int32_t>(batch.targets.begin() + row, batch.targets.begin() + row + batch.seq_len));
  }
  return {{"tokens", tokens}, {"targets", targets}};
}

}  // namespace ptdp
