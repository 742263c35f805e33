// NCCL's channels over a ring (sim/collectives/channels.hpp, issue 27), checked against figures
// derived here: a flat ring across servers with k NICs each reaches k NICs' bandwidth where one ring
// gets one NIC's, a server with one NIC gives the single ring's figure, and channels never change the
// bytes a GPU sends or receives.
#include "collectives/channels.hpp"
#include "scenario_text.hpp"
#include "sim/engine/isolated_run.hpp"
#include "places.hpp"
#include "test_support.hpp"

#include <cmath>
#include <map>
#include <string>

using namespace memwall;
using memwall::test::iota;
using memwall::test::packed;
using memwall::test::rel;
using memwall::test::scenario_from_text;

namespace {

// Shares sent and received per rank.
void check_conserved(const std::vector<collectives::RingFlow>& flows, long long n) {
  std::map<long long, double> sent, received;
  for (const auto& f : flows) {
    CHECK(f.src != f.dst);
    CHECK(f.share > 0);
    sent[f.src] += f.share;
    received[f.dst] += f.share;
  }
  REQUIRE(static_cast<long long>(sent.size()) == n);
  REQUIRE(static_cast<long long>(received.size()) == n);
  for (long long r = 0; r < n; ++r) {
    CHECK(sent[r] == rel(1.0, 1e-12));
    CHECK(received[r] == rel(1.0, 1e-12));
  }
}

// A DP job of a 7B-class model (the seed's worked example) on `gpus` GPUs of `fabric` (YAML).
sim::Scenario dp_job(long long gpus, const std::string& fabric, const std::string& cluster_extra,
                     const std::string& training = "{sharding: zero1}") {
  return scenario_from_text("gpu: A100-80GB\n"
                            "model: {hidden: 4096, layers: 32, seq_len: 2048, vocab: 50000}\n"
                            "batch: {tokens_per_microbatch: 2048, microbatches: 1}\n"
                            "cluster: {gpus: " + std::to_string(gpus) + ", fabric: " + fabric + cluster_extra + "}\n"
                            "training: " + training + "\n"
                            "allow_oom: true\n",
                            "channels");
}

std::string cluster_fabric(double nvlink_gb_s, double nic_gbit_s, bool nic_per_gpu, bool rails) {
  return "{kind: cluster, gpus_per_node: 8, nvlink: {bandwidth: " + std::to_string(nvlink_gb_s) +
         "GB/s, latency: 0us}, nic: {bandwidth: " + std::to_string(nic_gbit_s) + "Gb/s, latency: 0us}, nics: " +
         (nic_per_gpu ? "per-gpu" : "per-node") + ", leaf_ports: 32, rail_optimized: " + (rails ? "true" : "false") + "}";
}

} // namespace

TEST_CASE("channels: every GPU sends and receives the ring's bytes once, whatever the channels") {
  for (long long g : {2, 4, 8})
    for (long long servers : {2, 3, 4, 16})
      for (long long c : {1, 2, 3, 8, 16, 64}) {
        INFO("g = " << g << ", servers = " << servers << ", channels = " << c);
        check_conserved(collectives::channel_ring_flows(iota(g * servers), packed(g * servers, g), c), g * servers);
      }
  // Servers of unequal runs (a group that takes 3 GPUs of one server and 5 of the next): turned rings.
  std::vector<collectives::GpuPlace> uneven;
  for (long long r = 0; r < 8; ++r)
    uneven.push_back({r < 3 ? 0 : 1, r < 3 ? r : r - 3});
  check_conserved(collectives::channel_ring_flows(iota(8), uneven, 8), 8);
}

TEST_CASE("channels: one channel, one server, or one GPU per server is the single ring") {
  auto single = [](const std::vector<collectives::RingFlow>& flows, const std::vector<long long>& order) {
    REQUIRE(flows.size() == order.size());
    for (size_t i = 0; i < order.size(); ++i) {
      CHECK(flows[i].src == order[i]);
      CHECK(flows[i].dst == order[(i + 1) % order.size()]);
      CHECK(flows[i].share == 1.0); // exactly: the bytes stay the single ring's to the last bit
    }
  };
  const std::vector<long long> order{0, 2, 1, 3, 7, 5, 4, 6, 9, 8, 11, 10, 12, 14, 13, 15};
  single(collectives::channel_ring_flows(order, packed(16, 8), 1), order);
  single(collectives::channel_ring_flows(iota(8), packed(8, 8), 8), iota(8));
  single(collectives::channel_ring_flows(iota(16), packed(16, 1), 8), iota(16));
}

TEST_CASE("channels: with one channel per NIC, each NIC sends one channel's crossing and receives one, on its rail") {
  for (long long servers : {2, 3, 4, 16}) {
    const long long g = 8, n = g * servers;
    const auto places = packed(n, g);
    std::map<long long, int> out, in, inside, inside_in;
    for (const auto& f : collectives::channel_ring_flows(iota(n), places, g)) {
      if (places[size_t(f.src)].server == places[size_t(f.dst)].server) {
        ++inside[f.src];
        ++inside_in[f.dst];
        continue;
      }
      INFO("servers = " << servers << ", " << f.src << " -> " << f.dst);
      CHECK(places[size_t(f.src)].local == places[size_t(f.dst)].local); // rail-aligned
      CHECK(f.share == rel(1.0 / double(g), 1e-12));
      ++out[f.src];
      ++in[f.dst];
    }
    CHECK(static_cast<long long>(out.size()) == n);
    CHECK(static_cast<long long>(in.size()) == n);
    for (const auto& [rank, k] : out)
      CHECK(k == 1);
    for (const auto& [rank, k] : in)
      CHECK(k == 1);
    // With an even number of servers each GPU also sends to one GPU of its server and receives from
    // one: a ring round's links then carry one message each (timed without SimGrid messages).
    if (servers % 2 == 0)
      for (long long r = 0; r < n; ++r) {
        CHECK(inside[r] == 1);
        CHECK(inside_in[r] == 1);
      }
  }
}

TEST_CASE("channels: a flat ring across servers of k NICs reaches min(NVLink, k x NIC); one NIC per server, one NIC") {
  // 8 GPUs per server, NVLink 450 GB/s, NICs of 50 GB/s. Per GPU a ring round of x bytes (2 (n - 1) /
  // n of the gradient over the two rounds) goes as C = 8 channels: 1/8 of it across servers on its
  // own NIC, 7/8 on NVLink: x / (8 x 50 GB/s) against 7 x / (8 x 450 GB/s), so the NICs bound it and
  // the bus bandwidth, 2 (n - 1) / n D / t, is 8 x 50 = 400 GB/s = min(NVLink, k x NIC) (memwall's
  // ring has no protocol overhead yet: efficiency 1). Links of zero latency: no alpha term.
  const double nic = 50e9, k = 8;
  for (bool rails : {false, true})
    for (long long servers : {2, 4, 16}) {
      const long long n = 8 * servers;
      const auto r = sim::run_isolated(dp_job(n, cluster_fabric(450, 400, true, rails), ""));
      const double d = r["params"].get<double>() * 2.0; // bf16 gradients
      const double busbw = 2.0 * double(n - 1) / double(n) * d / r["t_allreduce_s"].get<double>();
      INFO("servers = " << servers << ", rail-optimized = " << rails);
      CHECK(busbw == rel(std::min(450e9, k * nic), 0.05));
      // One channel: the single ring, one NIC per crossing.
      const auto one = sim::run_isolated(dp_job(n, cluster_fabric(450, 400, true, rails), ", nccl: {channels: 1}"));
      CHECK(2.0 * double(n - 1) / double(n) * d / one["t_allreduce_s"].get<double>() == rel(nic, 0.01));
      // Channels never change the bytes a GPU sends.
      CHECK(r["bytes_sent_per_gpu"].get<double>() == rel(one["bytes_sent_per_gpu"].get<double>(), 1e-9));
    }
  // One NIC per server (on its NVSwitch): one channel by default, the single ring's figure; eight
  // channels asked for all cross through that NIC: the same time.
  const long long n = 32;
  const auto node_nic = sim::run_isolated(dp_job(n, cluster_fabric(450, 400, false, false), ""));
  const double d = node_nic["params"].get<double>() * 2.0;
  CHECK(2.0 * double(n - 1) / double(n) * d / node_nic["t_allreduce_s"].get<double>() == rel(nic, 0.01));
  const auto asked = sim::run_isolated(dp_job(n, cluster_fabric(450, 400, false, false), ", nccl: {channels: 8}"));
  CHECK(asked["t_allreduce_s"].get<double>() == rel(node_nic["t_allreduce_s"].get<double>(), 0.01));
}

TEST_CASE("channels: TP 16 over two DGX A100-like servers costs 1.61x the TP 8 step's communication, not 12.9x") {
  // Zero-latency DGX A100-like servers (NVLink 300 GB/s, 8 x 200 Gb/s NICs). TP 8 in one server: 2 x 7/8
  // M / 300 GB/s per all-reduce. TP 16 over two: per GPU 2 x 15/16 M, 1/8 of it on its NIC at 25 GB/s
  // (7/8 on NVLink is faster): (1.875 / 200) / (1.75 / 300) = 1.607 times TP 8's. One ring: 12.86x.
  auto tp_comm = [](long long t, const std::string& extra) {
    const std::string yaml =
        "gpu: A100-80GB\n"
        "model: {hidden: 3072, layers: 4, seq_len: 2048, heads: 32, ffn: gelu, tied_embeddings: true}\n"
        "batch: {global_batch: 1, micro_batch: 1}\n"
        "cluster: {gpus: " + std::to_string(t) + ", fabric: " + cluster_fabric(300, 200, true, true) + extra + "}\n"
        "parallelism: {tensor: " + std::to_string(t) + "}\n"
        "training: {sharding: none}\n";
    return sim::run_isolated(scenario_from_text(yaml, "tp"))["parallelism"]["t_tp_comm_s"].get<double>();
  };
  const double tp8 = tp_comm(8, "");
  const double ratio = (2.0 * 15.0 / 16.0 / (8.0 * 25e9)) / (2.0 * 7.0 / 8.0 / 300e9);
  CHECK(tp_comm(16, "") / tp8 == rel(ratio, 0.02));
  CHECK(ratio < 2.5);
  const double one_ring = (2.0 * 15.0 / 16.0 / 25e9) / (2.0 * 7.0 / 8.0 / 300e9);
  CHECK(tp_comm(16, ", nccl: {channels: 1}") / tp8 == rel(one_ring, 0.02));
}

TEST_CASE("channels: FSDP over 64 GPUs of 8 DGX H100-like servers is not slower with the ring than hierarchical") {
  // Ring, 8 channels: 2 x 63/64 D / 400 GB/s. Hierarchical: 2 x 7/8 D / 450 GB/s on NVLink, then
  // 2 x 7/8 (D / 8) / 50 GB/s per rail: 4.92 against 8.26 ps per byte of D.
  auto comm = [](const std::string& collective) {
    return sim::run_isolated(dp_job(64, cluster_fabric(450, 400, true, true), ", collective: " + collective,
                                    "{sharding: zero3}"))["t_comm_total_s"]
        .get<double>();
  };
  const double ring = comm("ring"), hierarchical = comm("hierarchical");
  CHECK(ring <= hierarchical);
  CHECK(ring / hierarchical == rel((2.0 * 63.0 / 64.0 / 400e9) / (2.0 * 7.0 / 8.0 / 450e9 + 2.0 * 7.0 / 8.0 / 8.0 / 50e9),
                                   0.05));
}

TEST_CASE("channels: refused outside 1..64") {
  for (const char* bad : {"0", "-1", "65", "2.5", "eight"}) {
    INFO(bad);
    CHECK_THROWS_AS(dp_job(16, cluster_fabric(450, 400, true, true), std::string(", nccl: {channels: ") + bad + "}"),
                    model::InputError);
  }
  CHECK_THROWS_AS(dp_job(16, cluster_fabric(450, 400, true, true), ", nccl: {chanels: 8}"), model::InputError);
}

TEST_CASE("channels: the model-parallel engine's data-parallel rings run as channels too") {
  // PP 2, DP 16 on four 8-GPU servers (zero latency): each stage's DP ring spans two servers. Stage
  // 0 (2 layers of 12 d^2 weights, d = 8192, no vocabulary: G = 2 B x 24 d^2) flushes last, so its
  // two ring rounds end the step: one channel R = 15/16 G / 50 GB/s each (its crossing on one NIC),
  // eight channels R / 8 (1/8 of it on each NIC; 7/8 on NVLink is faster). The rest of the step is
  // the same, so the steps differ by 2 x 7/8 R.
  auto run = [](long long channels) {
    return sim::run_isolated(scenario_from_text(
        "gpu: A100-80GB\n"
        "model: {hidden: 8192, layers: 4, seq_len: 2048, heads: 64, ffn: gelu, tied_embeddings: true}\n"
        "batch: {global_batch: 32, micro_batch: 1}\n"
        "cluster: {gpus: 32, fabric: " + cluster_fabric(450, 400, true, true) + ", nccl: {channels: " +
            std::to_string(channels) + "}}\n"
        "parallelism: {pipeline: 2}\n"
        "training: {sharding: none}\n",
        "pp"));
  };
  const auto one = run(1), eight = run(8);
  const double gradient_bytes = 2.0 * 2.0 * 12.0 * 8192.0 * 8192.0;
  const double round_s = 15.0 / 16.0 * gradient_bytes / 50e9;
  CHECK(one["step_time_s"].get<double>() - eight["step_time_s"].get<double>() == rel(2.0 * 7.0 / 8.0 * round_s, 0.01));
  CHECK(eight["bytes_sent_per_gpu"].get<double>() == rel(one["bytes_sent_per_gpu"].get<double>(), 1e-12));
}
