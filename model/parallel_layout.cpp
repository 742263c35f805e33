#include "parallel_layout.hpp"

namespace memwall::model {

const char* axis_name(Axis axis) {
  switch (axis) {
  case Axis::Tensor:
    return "tensor";
  case Axis::Context:
    return "context";
  case Axis::Expert:
    return "expert";
  case Axis::Data:
    return "data";
  default:
    return "pipeline";
  }
}

long long ParallelLayout::degree(Axis axis) const {
  switch (axis) {
  case Axis::Tensor:
    return tensor;
  case Axis::Context:
    return context;
  case Axis::Expert:
    return 1; // expert groups are carved out of the data-parallel ranks: no axis of their own
  case Axis::Data:
    return data;
  default:
    return pipeline;
  }
}

RankCoords coords_of(const ParallelLayout& layout, long long rank) {
  RankCoords c;
  for (Axis axis : layout.placement) {
    const long long n = layout.degree(axis);
    const long long value = rank % n;
    rank /= n;
    if (axis == Axis::Tensor)
      c.tensor = value;
    else if (axis == Axis::Context)
      c.context = value;
    else if (axis == Axis::Data)
      c.data = value;
    else if (axis == Axis::Pipeline)
      c.pipeline = value;
  }
  return c;
}

long long rank_of(const ParallelLayout& layout, const RankCoords& coords) {
  long long rank = 0, stride = 1;
  for (Axis axis : layout.placement) {
    const long long value = axis == Axis::Tensor    ? coords.tensor
                            : axis == Axis::Context ? coords.context
                            : axis == Axis::Data    ? coords.data
                            : axis == Axis::Pipeline ? coords.pipeline
                                                     : 0;
    rank += value * stride;
    stride *= layout.degree(axis);
  }
  return rank;
}

std::vector<long long> default_stage_layers(long long layers, long long stages) {
  const long long each = (layers + stages - 1) / stages;
  std::vector<long long> split(static_cast<size_t>(stages), each);
  long long surplus = each * stages - layers;
  // Give back from both ends inwards: first, last, second, second to last, ...
  for (long long i = 0; surplus > 0; ++i) {
    const long long from_front = i / 2, from_back = stages - 1 - i / 2;
    const long long s = i % 2 == 0 ? from_front : from_back;
    if (split[size_t(s)] > 1 || i >= 2 * stages) {
      split[size_t(s)] -= 1;
      --surplus;
    }
    if (i >= 4 * stages) // cannot happen when layers >= stages (checked by the loader)
      break;
  }
  return split;
}

long long first_layer_of_stage(const ParallelLayout& layout, long long stage) {
  return chunk_layers(layout, stage, 0).first;
}

LayerRange chunk_layers(const ParallelLayout& layout, long long stage, long long chunk) {
  const long long p = layout.pipeline, v = layout.virtual_stages;
  const long long target = chunk * p + stage;
  long long first = 0;
  for (long long piece = 0; piece < target; ++piece)
    first += layout.stage_layers[size_t(piece % p)] / v;
  return {first, first + layout.stage_layers[size_t(stage)] / v};
}

} // namespace memwall::model
