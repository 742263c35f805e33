// Collective times emerge from the simulated platform. Each expectation is an alpha-beta formula
// derived here: a ring of N GPUs on a star moves 2(N-1) chunks of D/N bytes per GPU, every chunk
// crossing the sender's up-link and the receiver's down-link (two links, two latencies).
#include "sim/engine/isolated_run.hpp"
#include "test_support.hpp"

using namespace memwall;
using memwall::test::gpu;
using memwall::test::rel;

namespace {

// A small, fast job: 8 GPUs, 2 layers of d = 1024, 1 sequence each.
sim::Scenario small_job(long long gpus, double link_bytes_per_s) {
  sim::Scenario s;
  s.name = "emergence";
  s.file = "test";
  s.gpu = gpu("A100-80GB");
  s.shape = {1024, 2, 512, 1000};
  s.tokens_per_microbatch = 512;
  s.gpus = gpus;
  s.fabric.link_bytes_per_s = link_bytes_per_s;
  return s;
}

double gradient_bytes(const sim::Scenario& s) { return 2.0 * model::total_params(s.shape); }

} // namespace

TEST_CASE("ring all-reduce on a star: 2 (N-1)/N D / B") {
  const sim::Scenario s = small_job(8, 10e9);
  const auto r = sim::run_isolated(s);
  const double n = 8, d = gradient_bytes(s);
  CHECK(r["t_allreduce_s"].get<double>() == rel(2.0 * (n - 1) / n * d / 10e9, 1e-6));
}

TEST_CASE("halving one GPU's link slows the whole ring to that link's pace") {
  sim::Scenario base = small_job(8, 10e9);
  sim::Scenario slow = base;
  slow.fabric.gpu_links[3].bytes_per_s = 5e9;
  const auto a = sim::run_isolated(base);
  const auto b = sim::run_isolated(slow);
  const double n = 8, d = gradient_bytes(base);
  // The ring is pipelined: each of its 2(N-1) steps waits for the slowest hop, D/N at B/2.
  const double predicted_extra = 2.0 * (n - 1) * (d / n) * (1.0 / 5e9 - 1.0 / 10e9);
  CHECK(b["step_time_s"].get<double>() - a["step_time_s"].get<double>() == rel(predicted_extra, 1e-6));
}

TEST_CASE("per-link latency adds 2(N-1) route latencies, each two links long") {
  sim::Scenario base = small_job(16, 25e9);
  sim::Scenario delayed = base;
  const double alpha = 5e-6;
  delayed.fabric.link_latency_s = alpha;
  const auto a = sim::run_isolated(base);
  const auto b = sim::run_isolated(delayed);
  const double n = 16;
  CHECK(b["t_allreduce_s"].get<double>() - a["t_allreduce_s"].get<double>() == rel(2.0 * (n - 1) * 2.0 * alpha, 1e-6));
}

TEST_CASE("network energy: bytes sent x 8 x pJ/bit x links crossed") {
  sim::Scenario s = small_job(4, 50e9);
  s.fabric.pj_per_bit = 5.0;
  const auto r = sim::run_isolated(s);
  const double n = 4, d = gradient_bytes(s);
  const double sent = 2.0 * (n - 1) / n * d;
  CHECK(r["e_network_j"].get<double>() == rel(sent * 8.0 * 2.0 * 5e-12, 1e-9));
  CHECK(r["energy_j"].get<double>() ==
        rel(r["e_arith_j"].get<double>() + r["e_hbm_j"].get<double>() + r["e_static_j"].get<double>() +
                r["e_network_j"].get<double>(),
            1e-12));
}

TEST_CASE("several steps: times scale, per-step figures stay") {
  sim::Scenario one = small_job(4, 25e9);
  sim::Scenario three = one;
  three.steps = 3;
  const auto a = sim::run_isolated(one);
  const auto b = sim::run_isolated(three);
  CHECK(b["makespan_s"].get<double>() == rel(3.0 * a["makespan_s"].get<double>(), 1e-9));
  CHECK(b["step_time_s"].get<double>() == rel(a["step_time_s"].get<double>(), 1e-9));
  CHECK(b["mj_per_token"].get<double>() == rel(a["mj_per_token"].get<double>(), 1e-9));
}
