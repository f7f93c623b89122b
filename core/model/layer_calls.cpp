// A one-layer chunk's forward and backward, recorded; see layer_calls.h.
#include "core/model/layer_calls.h"

#include <stdexcept>
#include <string>
#include <utility>

#include "core/model/model_chunk.h"

namespace ptdp {

LayerCalls record_layer_calls(Ops& ops, Communicator& tp, const Model& m, const Plan& p, const Tensor& x) {
  RecordingOps recording(ops);
  ModelContext ctx{recording, tp, m, p};
  ChunkLayout one;  // layer 0 alone: no embedding, no output layer
  one.num_layers = 1;
  ModelChunk chunk(ctx, one, nullptr);
  const Tensor grads = pack_grads(ops, chunk.params());  // zeroed fp32 gradients the backward adds to
  ChunkActs acts;
  const MicroBatch none{};
  LayerCalls calls;
  const Tensor y = chunk.forward(none, x, acts);
  calls.forward = recording.take_calls();
  chunk.backward(none, y, acts, 1.0, {}, nullptr);
  calls.backward = recording.take_calls();
  return calls;
}

RecordingOps::Call take_call(LayerCalls& calls, std::size_t index, const LayerOp& record) {
  std::vector<RecordingOps::Call>& list = record.pass == Pass::forward ? calls.forward : calls.backward;
  if (index >= list.size() || list[index].kind != record.kind || list[index].sizes != record.sizes)
    throw std::runtime_error(benchmark_name(record) + ": the layer's call " + std::to_string(index) +
                             " is not its record's (core/layer_ops/layer_ops.h)");
  return std::move(list[index]);
}

}  // namespace ptdp
