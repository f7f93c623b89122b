// Last backwards, their visit order and the parameters' sites.
#include "core/runtime/grad_overlap.h"

#include <algorithm>
#include <map>

#include "core/optim/grad_reduce.h"

namespace ptdp {

LastBackwards last_backwards(const Program& program, int chunks) {
  LastBackwards last;
  last.mb.assign(static_cast<std::size_t>(chunks), -1);
  std::vector<std::size_t> at(static_cast<std::size_t>(chunks), 0);  // position of the last backward
  for (std::size_t i = 0; i < program.size(); ++i) {
    const Instr& in = program[i];
    if (!ends_gradients(in.op) || in.chunk < 0 || in.chunk >= chunks) continue;
    last.mb[static_cast<std::size_t>(in.chunk)] = in.mb;
    at[static_cast<std::size_t>(in.chunk)] = i;
  }
  for (int c = 0; c < chunks; ++c)
    if (last.mb[static_cast<std::size_t>(c)] >= 0) last.chunk_order.push_back(c);
  std::sort(last.chunk_order.begin(), last.chunk_order.end(),
            [&](int a, int b) { return at[static_cast<std::size_t>(a)] < at[static_cast<std::size_t>(b)]; });
  return last;
}

std::vector<BackwardSite> backward_visit(RankModel& model, const LastBackwards& last) {
  std::vector<BackwardSite> visit;
  for (int c : last.chunk_order)
    for (const ChunkPart& part : model.chunk(c).backward_parts()) visit.push_back({c, part.part});
  return visit;
}

std::vector<BucketParam> bucket_params(RankModel& model) {
  std::map<const Param*, std::vector<BackwardSite>> sites;
  for (int c = 0; c < model.num_chunks(); ++c)
    for (const ChunkPart& part : model.chunk(c).backward_parts())
      for (const Param* p : part.params) sites[p].push_back({c, part.part});
  std::vector<BucketParam> out;
  for (const Param* p : model.params())
    out.push_back({p->value.numel(), sites[p], p == model.tied_word()});
  return out;
}

ReductionPlan plan_reduction(RankModel& model, const Program& program, std::int64_t align) {
  ReductionPlan plan;
  plan.last = last_backwards(program, model.num_chunks());
  plan.visit = backward_visit(model, plan.last);
  plan.buckets = schedule_buckets(bucket_params(model), plan.visit,
                                  bucket_elements_for(model.grad_buffer().numel()), align);
  return plan;
}

}  // namespace ptdp
