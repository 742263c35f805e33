// The expert-parallel all-to-all as NCCL runs it (collectives/all_to_all.hpp, sim/parallel/
// expert_exchange.hpp), checked against figures derived here: PXN's legs on two DGX-like servers,
// stand-ins that carry every GPU's bytes, max-min times worked by hand, and whole runs whose stand-ins
// take exactly the time of every leg simulated (MEMWALL_SIMULATE_MESSAGES=1).
#include "collectives/all_to_all.hpp"
#include "scenario_text.hpp"
#include "sim/engine/isolated_run.hpp"
#include "sim/parallel/expert_exchange.hpp"
#include "places.hpp"
#include "test_support.hpp"

#include <cstdlib>
#include <map>
#include <string>

using namespace memwall;
using memwall::test::iota;
using memwall::test::packed;
using memwall::test::rel;
using memwall::test::scenario_from_text;

namespace {

// Per GPU: units sent, received; and per (server of src == server of dst) the flows.
struct Tally {
  std::map<long long, double> sent, received;
  long long local = 0, remote = 0;
};
Tally tally(const std::vector<collectives::Flow>& flows, long long g) {
  Tally t;
  for (const auto& f : flows) {
    CHECK(f.src != f.dst);
    t.sent[f.src] += f.bytes;
    t.received[f.dst] += f.bytes;
    (f.src / g == f.dst / g ? t.local : t.remote) += 1;
  }
  return t;
}

} // namespace

TEST_CASE("all-to-all: PXN on two servers of 8 sends each message on its destination's rail") {
  // E = 16 over two servers. GPU (s, j) sends 1 unit to each of 15 others: 7 to server-mates over
  // NVLink, 8 to the other server, each through its server-mate on the destination's rail (the
  // mate of rail j itself for (1 - s, j)). So to each server-mate k: its own unit plus the one for
  // (1 - s, k): 2 units; on its own NIC: the 8 units its 8 server-mates (itself included) send to
  // (1 - s, j). Sent per GPU: 7 x 2 + 8 = 22 units, received as much.
  const auto places = packed(16, 8);
  const auto legs = collectives::all_to_all_flows(iota(16), places, true, 1.0);
  const Tally t = tally(legs, 8);
  CHECK(t.local == 16 * 7);
  CHECK(t.remote == 16);
  for (const auto& f : legs) {
    CHECK(f.bytes == rel(f.src / 8 == f.dst / 8 ? 2.0 : 8.0));
    if (f.src / 8 != f.dst / 8)
      CHECK(f.src % 8 == f.dst % 8); // on its rail
  }
  for (long long r = 0; r < 16; ++r) {
    CHECK(t.sent.at(r) == rel(22.0));
    CHECK(t.received.at(r) == rel(22.0));
  }
  // Stand-ins: per GPU one flow of its 14 NVLink units to the next server-mate, one of its 8 NIC
  // units to the same rail of the other server; the same units out of and into every GPU.
  const auto stand_ins = collectives::all_to_all_stand_ins(legs, iota(16), places);
  const Tally s = tally(stand_ins, 8);
  CHECK(s.local == 16);
  CHECK(s.remote == 16);
  for (const auto& f : stand_ins) {
    CHECK(f.bytes == rel(f.src / 8 == f.dst / 8 ? 14.0 : 8.0));
    if (f.src / 8 != f.dst / 8)
      CHECK(f.src % 8 == f.dst % 8);
  }
  for (long long r = 0; r < 16; ++r) {
    CHECK(s.sent.at(r) == rel(22.0));
    CHECK(s.received.at(r) == rel(22.0));
  }
  // Without PXN: E (E - 1) messages of one unit, each on its own route.
  const auto direct = collectives::all_to_all_flows(iota(16), places, false, 1.0);
  CHECK(direct.size() == 16 * 15);
}

TEST_CASE("all-to-all: no relay outside the communicator, no stand-ins where a rail is missing") {
  // Ranks 1 and 8 of servers of 8: (0, 1) -> (1, 0) would relay through (0, 0), not a member: direct.
  const auto places = packed(16, 8);
  const auto legs = collectives::all_to_all_flows({1, 8}, places, true, 1.0);
  REQUIRE(legs.size() == 2);
  CHECK(legs[0].src == 1);
  CHECK(legs[0].dst == 8);
  // Rank 1's next server holds no member of local rank 1: no stand-ins.
  CHECK(collectives::all_to_all_stand_ins(legs, {1, 8}, places).empty());
}

TEST_CASE("all-to-all: max-min time alone, by hand") {
  using sim::parallel::TimedFlow;
  // Two flows of 10 B over one 10 B/s link, 1 s latency: 5 B/s each, 2 s, ending at 3 s.
  CHECK(sim::parallel::isolated_time_s({{{0}, 10, 1}, {{0}, 10, 1}}, {10}) == rel(3.0));
  // A flow over links 0 and 1 (10 and 4 B/s) and one over link 0 alone: 4 and 6 B/s; 12 B and 18 B
  // end together at 3 s.
  CHECK(sim::parallel::isolated_time_s({{{0, 1}, 12, 0}, {{0}, 18, 0}}, {10, 4}) == rel(3.0));
  // Ending apart on a shared link: the later one speeds up when the first ends, not told here.
  CHECK(sim::parallel::isolated_time_s({{{0}, 10, 0}, {{0}, 20, 0}}, {10}) < 0);
  // Latencies apart on a shared link: not told either. On separate links: the later end.
  CHECK(sim::parallel::isolated_time_s({{{0}, 10, 0}, {{0}, 10, 1}}, {10}) < 0);
  CHECK(sim::parallel::isolated_time_s({{{0}, 10, 0}, {{1}, 10, 1}}, {10, 5}) == rel(3.0));
}

namespace {

// An MoE model, every layer 16 experts top-2, over E = 16 GPUs of two zero-latency DGX H100-like
// servers (NVLink 450 GB/s, a 400 Gb/s NIC per GPU, rails), PP `p`.
std::string moe_on_two_servers(long long p) {
  return "gpu: H100-SXM\n"
         "model: {hidden: 1024, layers: 4, seq_len: 1024, vocab: 1024, heads: 8, ffn: gelu, tied_embeddings: true,\n"
         "        moe: {experts: 16, top_k: 2, expert_ffn_hidden: 1024}}\n"
         "batch: {global_batch: " + std::to_string(4 * 16 / p) + ", micro_batch: 1}\n"
         "cluster: {gpus: 16, fabric: {kind: cluster, gpus_per_node: 8, nvlink: {bandwidth: 450GB/s, latency: 0us},\n"
         "          nic: {bandwidth: 400Gb/s, latency: 0us}, nics: per-gpu, leaf_ports: 32, rail_optimized: true}}\n"
         "parallelism: {expert: " + std::to_string(16 / p) + ", pipeline: " + std::to_string(p) + "}\n"
         "training: {sharding: none}\n";
}

nlohmann::json run(const std::string& yaml, bool every_message) {
  if (every_message)
    setenv("MEMWALL_SIMULATE_MESSAGES", "1", 1);
  const auto r = sim::run_isolated(scenario_from_text(yaml, "ep"));
  unsetenv("MEMWALL_SIMULATE_MESSAGES");
  return r;
}

} // namespace

TEST_CASE("expert all-to-all: EP 16 over two servers is NIC-bound as derived; stand-ins take the legs' exact time") {
  const auto fast = run(moe_on_two_servers(1), false);
  const auto every = run(moe_on_two_servers(1), true);
  // Per all-to-all of M bytes per GPU (tokens x top_k x d x 2 B), each NIC sends 8 units of M / 16
  // (above) at 50 GB/s; NVLink's 14 units at 450 GB/s take less. Forward: dispatch and combine as
  // one flow of 2 M / 16 per unit; backward the same: 4 x 8 M / 16 / 50 GB/s per layer.
  const double m = 1024.0 * 2 * 1024 * 2, layers = 4, microbatches = 4;
  const double derived = layers * microbatches * 4.0 * 8.0 * m / 16.0 / 50e9;
  CHECK(every["parallelism"]["t_ep_comm_s"].get<double>() == rel(derived, 1e-6));
  CHECK(fast["parallelism"]["t_ep_comm_s"].get<double>() == rel(every["parallelism"]["t_ep_comm_s"].get<double>(), 1e-9));
  CHECK(fast["step_time_s"].get<double>() == rel(every["step_time_s"].get<double>(), 1e-9));
  CHECK(fast["bytes_sent_per_gpu"].get<double>() == rel(every["bytes_sent_per_gpu"].get<double>(), 1e-12));
  CHECK(fast["e_network_j"].get<double>() == rel(every["e_network_j"].get<double>(), 1e-9));
  // Beside pipeline sends the stand-ins share links per flow, not per leg: close, not exact.
  const auto fast_pp = run(moe_on_two_servers(2), false);
  const auto every_pp = run(moe_on_two_servers(2), true);
  CHECK(fast_pp["step_time_s"].get<double>() == rel(every_pp["step_time_s"].get<double>(), 0.02));
}

TEST_CASE("expert all-to-all: EP folded over data x context (EP 4 over DP 2 x CP 2) takes (E - 1) M / (E B) + alpha") {
  // Megatron-Core folds expert parallelism over CP x DP: EP 4 with DP 2 and CP 2 is one group of
  // all four GPUs. Each holds 1 / c of a sequence's tokens: M = tokens / 2 x top_k x d x 2 bytes.
  const std::string yaml =
      "gpu: A100-80GB\n"
      "model: {hidden: 1024, layers: 2, seq_len: 1024, vocab: 1024, heads: 8, ffn: gelu, tied_embeddings: true,\n"
      "        moe: {experts: 8, top_k: 2, expert_ffn_hidden: 2048}}\n"
      "batch: {global_batch: 2, micro_batch: 1}\n"
      "cluster: {gpus: 4, fabric: {kind: star, bandwidth: 50GB/s, latency: 1us}}\n"
      "parallelism: {expert: 4, context: 2}\n"
      "training: {sharding: none}\n";
  const auto r = sim::run_isolated(scenario_from_text(yaml, "fold"));
  const double e = 4, layers = 2, message = 1024.0 / 2.0 * 2.0 * 1024.0 * 2.0, alpha = 2e-6;
  const double one = (e - 1.0) * message / (e * 50e9) + alpha;
  CHECK(r["parallelism"]["t_ep_comm_s"].get<double>() == rel(4.0 * layers * one, 0.01));
  // Folded over TP as well (expert_tensor_parallel 1): TP 2 x DP 2, EP 4 is one group of all four GPUs,
  // each with 1 / t of a micro-batch's tokens (sequence parallel): M = tokens / 2 x top_k x d x 2 bytes,
  // the same all-to-all on the star.
  const std::string folded_yaml =
      "gpu: A100-80GB\n"
      "model: {hidden: 1024, layers: 2, seq_len: 1024, vocab: 1024, heads: 8, ffn: gelu, tied_embeddings: true,\n"
      "        moe: {experts: 8, top_k: 2, expert_ffn_hidden: 2048}}\n"
      "batch: {global_batch: 2, micro_batch: 1}\n"
      "cluster: {gpus: 4, fabric: {kind: star, bandwidth: 50GB/s, latency: 1us}}\n"
      "parallelism: {tensor: 2, sequence_parallel: true, expert: 4, expert_tensor_parallel: 1}\n"
      "training: {sharding: none}\n";
  const auto folded = sim::run_isolated(scenario_from_text(folded_yaml, "fold-tp"));
  CHECK(folded["parallelism"]["t_ep_comm_s"].get<double>() == rel(4.0 * layers * one, 0.01));
  CHECK(folded["parallelism"]["expert_tensor_parallel"].get<long long>() == 1);
  // Without the key, EP 4 must divide DP 2: refused, naming the key that folds over TP.
  std::string unfolded = folded_yaml;
  unfolded.replace(unfolded.find(", expert_tensor_parallel: 1"), std::string(", expert_tensor_parallel: 1").size(), "");
  CHECK_THROWS_WITH(scenario_from_text(unfolded, "bad"), Catch::Contains("expert_tensor_parallel: 1"));
  // EP 3 divides neither: refused, naming data x context.
  CHECK_THROWS_WITH(scenario_from_text("gpu: A100-80GB\n"
                                       "model: {hidden: 1024, layers: 2, seq_len: 1024, heads: 8, moe: {experts: 6, top_k: 2, expert_ffn_hidden: 2048}}\n"
                                       "batch: {global_batch: 2, micro_batch: 1}\n"
                                       "cluster: {gpus: 4, fabric: {kind: star, bandwidth: 50GB/s}}\n"
                                       "parallelism: {expert: 3, context: 2}\n",
                                       "bad"),
                    Catch::Contains("data 2 x context 2"));
}
