// How a job is laid out over its GPUs: tensor (TP, with or without sequence parallelism), pipeline
// (PP: stages of consecutive layers, optionally v model chunks each), context (CP) and data (DP)
// parallelism, and the order in which those axes map onto the GPU ranks. No SimGrid here.
//
// Ranks: `placement` lists the axes innermost first. With the default [tensor, context, expert,
// data, pipeline] the T GPUs of a TP group are consecutive ranks (one NVLink domain when T divides
// the GPUs per node), and a pipeline stage's replicas are T x C ranks apart.
#pragma once

#include <array>
#include <string>
#include <vector>

namespace memwall::model {

enum class Axis { Tensor, Context, Expert, Data, Pipeline };
inline constexpr int kAxes = 5;
const char* axis_name(Axis axis);

struct ParallelLayout {
  long long tensor = 1;
  bool sequence_parallel = false;
  bool tp_overlap = false;             // a layer's TP collectives beside its GEMMs (Megatron-LM's tp-comm-overlap)
  bool moe_a2a_overlap = false;        // an MoE layer's all-to-alls beside its compute (overlap_moe_expert_parallel_comm)
  long long pipeline = 1;
  std::vector<long long> stage_layers; // per pipeline stage; sums to the model's layers
  long long virtual_stages = 1;        // model chunks per stage (> 1: interleaved 1F1B)
  // Layers per virtual stage, chunk c of stage s at c x pipeline + s (Megatron-Core's
  // pipeline_model_parallel_layout); empty: each stage's layers split evenly over its chunks.
  std::vector<long long> virtual_layers;
  long long layout_mtp_layers = -1; // the 'm' of a layout string (they are in virtual_layers); -1: none given
  // Megatron-Core's account_for_embedding_in_pipeline_split / account_for_loss_in_pipeline_split:
  // the default split counts the input embedding (first virtual stage) and the loss (last) as a layer.
  bool account_for_embedding = false, account_for_loss = false;
  bool gpipe = false;                  // the GPipe schedule instead of 1F1B
  long long context = 1;
  long long expert = 1;
  // Megatron-Core's expert_tensor_parallel_size: how many ways a routed expert's GEMMs are split. 0
  // (the default) is the tensor degree: an expert group is EP data x context slots, one communicator
  // per TP rank. 1 with tensor > 1 folds the expert group over the TP ranks too (MoE parallel
  // folding): EP / tensor slots x all their TP ranks, one communicator, whole experts.
  long long expert_tensor = 0;
  long long expert_tensor_degree() const { return expert_tensor > 0 ? expert_tensor : tensor; }
  // The data x context slots of one expert group: EP with whole-TP experts, EP / tensor folded.
  long long expert_slots() const { return expert * expert_tensor_degree() / tensor; }
  long long data = 1; // gpus / (tensor x pipeline x context)
  std::array<Axis, kAxes> placement{Axis::Tensor, Axis::Context, Axis::Expert, Axis::Data, Axis::Pipeline};

  // True when anything but data parallelism is in use (the DP-only engine runs otherwise).
  bool model_parallel() const { return tensor > 1 || pipeline > 1 || context > 1 || expert > 1; }
  long long degree(Axis axis) const;
};

// A GPU's coordinate on each axis.
struct RankCoords {
  long long tensor = 0, context = 0, data = 0, pipeline = 0;
};
RankCoords coords_of(const ParallelLayout& layout, long long rank);
long long rank_of(const ParallelLayout& layout, const RankCoords& coords);

// Layers per stage as Megatron-LM places them: an even split; when the layers do not divide, every
// stage gets the rounded-up count and the first and last stages (which also hold the embeddings and
// the LM head) give one back first, then the second and second to last, and so on. Llama-3.1 405B's
// 126 layers over 16 stages: 7, 8 x 14, 7.
std::vector<long long> default_stage_layers(long long layers, long long stages);

// The first layer of each stage, and the layers `[first, last)` of a stage's chunk c: as
// virtual_layers lists them, or a stage's layers split evenly over its v chunks (the layout check
// makes them divide).
long long first_layer_of_stage(const ParallelLayout& layout, long long stage);
struct LayerRange {
  long long first = 0, last = 0;
};
// Chunk c of stage s is virtual stage c p + s: with v chunks, the model's layers are cut into p v
// pieces in order, stage s holding pieces s, p + s, 2 p + s, ...
LayerRange chunk_layers(const ParallelLayout& layout, long long stage, long long chunk);

// Megatron-Core's layout string (pipeline_model_parallel_layout) as layers per virtual stage: stages
// separated by '|', 'E' the embedding (first stage only, first), 't' a transformer layer, 'L' the loss
// (last stage only, last), "x*n" and "(...)*n" repeat; e.g. "Et|(tt|)*30L". Throws
// std::invalid_argument naming what is wrong ('m', multi-token prediction, is not modelled).
struct PipelineLayoutText {
  std::vector<long long> virtual_layers; // 't' and 'm' per virtual stage
  bool embedding = false, loss = false;  // whether E and L were written
  long long mtp = 0;                     // 'm': multi-token-prediction layers, after every 't'
};
PipelineLayoutText parse_pipeline_layout(const std::string& text);

} // namespace memwall::model
