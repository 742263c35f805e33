#include "parallel_layout.hpp"

#include <cctype>
#include <stdexcept>
#include <string>

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
  if (!layout.virtual_layers.empty()) {
    long long first = 0;
    for (long long piece = 0; piece < target; ++piece)
      first += layout.virtual_layers[size_t(piece)];
    return {first, first + layout.virtual_layers[size_t(target)]};
  }
  long long first = 0;
  for (long long piece = 0; piece < target; ++piece)
    first += layout.stage_layers[size_t(piece % p)] / v;
  return {first, first + layout.stage_layers[size_t(stage)] / v};
}

namespace {

// "x*n" and "(...)*n" written out, innermost first.
std::string expand_repeats(std::string text) {
  auto count_at = [&](size_t& i) {
    size_t j = i;
    while (j < text.size() && std::isdigit(static_cast<unsigned char>(text[j])))
      ++j;
    if (j == i || j - i > 4)
      throw std::invalid_argument("a repeat '*' needs a count of 1 to 4 digits");
    const long long n = std::stoll(text.substr(i, j - i));
    i = j;
    return n;
  };
  for (size_t star = text.find('*'); star != std::string::npos; star = text.find('*')) {
    size_t begin = star, end = star + 1;
    std::string unit;
    if (star > 0 && text[star - 1] == ')') {
      const size_t open = text.rfind('(', star - 1);
      if (open == std::string::npos)
        throw std::invalid_argument("a ')' without its '('");
      unit = text.substr(open + 1, star - 2 - open);
      begin = open;
    } else if (star > 0) {
      unit = text.substr(star - 1, 1);
      begin = star - 1;
    } else {
      throw std::invalid_argument("a '*' with nothing before it to repeat");
    }
    const long long n = count_at(end);
    std::string repeated;
    for (long long k = 0; k < n; ++k) {
      repeated += unit;
      if (repeated.size() > 100000)
        throw std::invalid_argument("the layout written out exceeds 100,000 characters");
    }
    text = text.substr(0, begin) + repeated + text.substr(end);
  }
  if (text.find_first_of("()") != std::string::npos)
    throw std::invalid_argument("a '(' or ')' without a '*n' repeat after it");
  return text;
}

} // namespace

PipelineLayoutText parse_pipeline_layout(const std::string& text) {
  std::string flat;
  for (char ch : text)
    if (ch != ' ' && ch != ',')
      flat += ch;
  flat = expand_repeats(flat);
  PipelineLayoutText out;
  std::vector<std::string> stages(1);
  for (char ch : flat) {
    if (ch == '|')
      stages.emplace_back();
    else
      stages.back().push_back(ch);
  }
  for (size_t k = 0; k < stages.size(); ++k) {
    long long layers = 0;
    for (size_t i = 0; i < stages[k].size(); ++i) {
      const char ch = stages[k][i];
      if (ch == 't') {
        if (out.mtp > 0)
          throw std::invalid_argument("'t' after 'm': multi-token prediction layers follow every layer");
        ++layers;
      } else if (ch == 'E') {
        if (k != 0 || i != 0)
          throw std::invalid_argument("'E' (the embedding) may only open the first virtual stage");
        out.embedding = true;
      } else if (ch == 'L') {
        if (k + 1 != stages.size() || i + 1 != stages[k].size())
          throw std::invalid_argument("'L' (the loss) may only close the last virtual stage");
        out.loss = true;
      } else if (ch == 'm') { // an MTP module's layer: after the model's layers, as Megatron-Core requires
        ++layers;
        ++out.mtp;
      } else {
        throw std::invalid_argument(std::string("unknown layer symbol '") + ch +
                                    "' (expected E, t, L, '|', '*n' and parentheses)");
      }
    }
    out.virtual_layers.push_back(layers);
  }
  return out;
}

} // namespace memwall::model
