// A one-layer chunk's forward and backward, recorded; see layer_calls.h.
#include "core/model/layer_calls.h"

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

}  // namespace ptdp
