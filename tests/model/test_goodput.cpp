// Goodput over a whole run (model/goodput.hpp), against figures derived here by hand: Poisson counts,
// Young's interval, the checkpoint overhead with no failures, what an asynchronous checkpoint costs,
// and the conservation of wall-clock time.
#include "model/goodput.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

using namespace memwall::model;

namespace {

FailureKind kind(const char* name, double per_device_hour, double devices, bool server = false) {
  FailureKind k;
  k.name = name;
  k.per_device_hour = per_device_hour;
  k.devices = devices;
  k.takes_server = server;
  return k;
}

CheckpointSpec sync_checkpoint(double bytes, double write_bytes_per_s) {
  CheckpointSpec c;
  c.bytes = bytes;
  c.write_bytes_per_s = write_bytes_per_s;
  c.read_bytes_per_s = write_bytes_per_s;
  c.gpus = 64;
  c.snapshot_bytes_per_s = 25e9;
  return c;
}

} // namespace

TEST_CASE("goodput: interruptions over seeds are N r T within 3 standard errors", "[goodput]") {
  ReliabilitySpec r;
  r.kinds = {kind("gpu", 2e-5, 4096, true)}; // 0.08192 per hour
  r.detection_s = 300;
  r.restart_s = 600;
  r.seeds = 2000;
  RunWindow w;
  w.duration_s = 30 * 86400.0;
  w.step_s = 5;
  const CheckpointSpec c = sync_checkpoint(1e12, 1e11);
  const GoodputReport g = simulate_goodput(r, c, w, 4096);
  const double expected = 4096 * 2e-5 * 30 * 24; // 58.98
  // Poisson: the standard error of the mean is sqrt(N r T / seeds) = 0.172.
  CHECK(g.interruptions_sem == Approx(std::sqrt(expected / 2000)).epsilon(0.1));
  CHECK(std::abs(g.interruptions_mean - expected) < 3 * g.interruptions_sem);
  // Two kinds: each gets its own rate's share.
  r.kinds.push_back(kind("software", 0.05, 1));
  const GoodputReport two = simulate_goodput(r, c, w, 4096);
  CHECK(std::abs(two.by_kind_mean[1] - 0.05 * 720) < 3 * std::sqrt(0.05 * 720 / 2000));
  CHECK(std::abs(two.interruptions_mean - (expected + 36)) < 3 * two.interruptions_sem);
}

TEST_CASE("goodput: the optimal interval is Young's sqrt(2 C M)", "[goodput]") {
  ReliabilitySpec r;
  r.kinds = {kind("gpu", 1e-5, 10000), kind("host", 1e-4, 1250)}; // 0.1 + 0.125 per hour
  r.seeds = 10;
  RunWindow w;
  w.steps = 10000;
  w.step_s = 2;
  const CheckpointSpec c = sync_checkpoint(2e12, 1e12); // C = 2 s
  const GoodputReport g = simulate_goodput(r, c, w, 10000);
  const double m = 3600.0 / 0.225; // 16000 s
  CHECK(g.mtbf_s == Approx(m).epsilon(1e-12));
  CHECK(g.young_interval_s == Approx(std::sqrt(2 * 2.0 * m)).epsilon(0.01)); // 253.0 s
  CHECK(g.interval_steps == std::round(std::sqrt(2 * 2.0 * m) / 2));
  // Young's interval is near the best: goodput there beats a tenth and ten times of it.
  r.seeds = 400;
  CheckpointSpec tight = c, loose = c;
  tight.interval_s = g.young_interval_s / 10;
  tight.latency_s = 0;
  loose.interval_s = g.young_interval_s * 10;
  const double at_young = simulate_goodput(r, c, w, 10000).goodput_mean;
  CHECK(at_young > simulate_goodput(r, tight, w, 10000).goodput_mean);
  CHECK(at_young > simulate_goodput(r, loose, w, 10000).goodput_mean);
}

TEST_CASE("goodput: with no failures, 1 minus the checkpoint overhead exactly", "[goodput]") {
  ReliabilitySpec r; // no failure kinds
  r.seeds = 3;
  RunWindow w;
  w.steps = 1000;
  w.step_s = 3;
  CheckpointSpec c = sync_checkpoint(5e11, 1e11); // 5 s
  c.latency_s = 1;                                // 6 s per checkpoint
  c.interval_s = 300;                             // every 100 steps
  const GoodputReport g = simulate_goodput(r, c, w, 64);
  // Checkpoints after steps 100, 200, ..., 900 (none after the last step): 9 x 6 s.
  const double wall = 1000 * 3.0 + 9 * 6.0;
  CHECK(g.interval_steps == 100);
  CHECK(g.days_mean * 86400 == Approx(wall).epsilon(1e-12));
  CHECK(g.goodput_mean == Approx(1.0 - 9 * 6.0 / wall).epsilon(1e-12));
  CHECK(g.interruptions_mean == 0);
  CHECK(g.checkpoint_h_mean * 3600 == Approx(54).epsilon(1e-12));
}

TEST_CASE("goodput: an asynchronous checkpoint costs only its snapshot", "[goodput]") {
  ReliabilitySpec r;
  r.seeds = 1;
  RunWindow w;
  w.steps = 1000;
  w.step_s = 3;
  CheckpointSpec c = sync_checkpoint(6.4e11, 1e11); // a 6.4 s write, 10 GB per GPU
  c.async = true;
  c.interval_s = 300;
  const double snapshot_s = 6.4e11 / 64 / 25e9; // 0.4 s
  CHECK(c.snapshot_s() == Approx(snapshot_s).epsilon(1e-12));
  const GoodputReport g = simulate_goodput(r, c, w, 64);
  CHECK(g.days_mean * 86400 == Approx(1000 * 3.0 + 9 * snapshot_s).epsilon(1e-12));
  // A write longer than the interval makes the next snapshot wait for it: 9 snapshots, and 8 waits of
  // write - interval (the write of checkpoint k ends write_s after its snapshot; the next is due 30 s on).
  CheckpointSpec slow = c;
  slow.write_bytes_per_s = 6.4e11 / 40.0; // 40 s writes
  slow.interval_s = 30;                   // every 10 steps: 99 checkpoints
  const GoodputReport s = simulate_goodput(r, slow, w, 64);
  CHECK(s.days_mean * 86400 == Approx(1000 * 3.0 + 99 * snapshot_s + 98 * (40 - 30.0)).epsilon(1e-9));
}

TEST_CASE("goodput: wall-clock time is kept steps, lost work, downtime and checkpoint waits", "[goodput]") {
  ReliabilitySpec r;
  r.kinds = {kind("gpu", 1e-4, 1000, true), kind("software", 0.2, 1)};
  r.detection_s = 120;
  r.restart_s = 300;
  RunWindow w;
  w.steps = 20000;
  w.step_s = 4;
  CheckpointSpec c = sync_checkpoint(1e12, 2e11);
  c.interval_s = 1200;
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    const SeedRun run = simulate_run(r, c, 300, w, seed);
    CHECK(run.steps_kept == 20000);
    CHECK(run.steps_run * 4 == Approx(20000 * 4.0 + run.lost_s).epsilon(1e-9));
    CHECK(run.wall_s == Approx(run.steps_run * 4 + run.down_s + run.checkpoint_wait_s).epsilon(1e-9));
    // Every interruption costs at least detection + restart + reading the checkpoint back (10 s with
    // this storage), unless another failure starts it again first.
    CHECK(run.down_s <= run.interruptions * (120 + 300 + 5) + 1e-6);
    CHECK(run.goodput == Approx(20000 * 4.0 / run.wall_s).epsilon(1e-12));
  }
}

TEST_CASE("goodput: without spares the job waits for a repaired server, or shrinks and goes on slower", "[goodput]") {
  ReliabilitySpec r;
  r.kinds = {kind("gpu", 1e-3, 64, true)}; // one failure per 15.6 h
  r.detection_s = 60;
  r.restart_s = 60;
  r.repair_s = 86400;
  r.servers = 8;
  r.seeds = 200;
  RunWindow w;
  w.duration_s = 20 * 86400.0;
  w.step_s = 10;
  CheckpointSpec c = sync_checkpoint(1e11, 1e11);
  c.interval_s = 600;
  const double unlimited = simulate_goodput(r, c, w, 64).goodput_mean;
  r.spares = 0;
  const GoodputReport waited = simulate_goodput(r, c, w, 64);
  r.shrink = true;
  const double shrunk = simulate_goodput(r, c, w, 64).goodput_mean;
  r.shrink = false;
  r.spares = 8;
  const double eight = simulate_goodput(r, c, w, 64).goodput_mean;
  // Each failure without a spare costs up to a day of repair: goodput falls by about the repair time
  // over the mean time between failures (24 h / 15.6 h per failure: most of the time waiting).
  CHECK(waited.goodput_mean < unlimited - 0.4);
  CHECK(waited.down_h_mean > 0.5 * waited.interruptions_mean * 24);
  CHECK(shrunk > waited.goodput_mean);
  CHECK(shrunk < unlimited);
  CHECK(eight <= unlimited + 1e-12);
  CHECK(eight > waited.goodput_mean);
}

TEST_CASE("goodput: a re-routed link slows the run without stopping it", "[goodput]") {
  ReliabilitySpec r;
  FailureKind link = kind("link (between switches)", 1e-3, 100);
  link.effect = FailureEffect::Reroute;
  link.slowdown = 0.5;
  r.kinds = {link};
  r.repair_s = 3600;
  r.seeds = 1;
  RunWindow w;
  w.duration_s = 10 * 86400.0;
  w.step_s = 1;
  CheckpointSpec c = sync_checkpoint(1e9, 1e12);
  c.interval_s = 100;
  std::vector<RunEvent> events;
  const SeedRun run = simulate_run(r, c, 100, w, 7, &events);
  CHECK(run.interruptions == 0);
  CHECK(run.degraded > 0);
  CHECK(run.lost_s == 0);
  CHECK(run.down_s == 0);
  // Steps run at 1 / (1 + 0.5 x links out) while links are out: fewer steps than the window holds.
  CHECK(run.steps_run < w.duration_s - run.checkpoint_wait_s);
  CHECK(run.slow_s > 0);
  CHECK(events.back().kind == RunEvent::Kind::End);
  // A straggler (effect slow) does the same: the same seed, the same draws, the same run.
  r.kinds[0].effect = FailureEffect::Slow;
  std::vector<RunEvent> slowed;
  const SeedRun straggler = simulate_run(r, c, 100, w, 7, &slowed);
  CHECK(straggler.steps_run == run.steps_run);
  CHECK(straggler.degraded == run.degraded);
  CHECK(std::count_if(slowed.begin(), slowed.end(), [](const RunEvent& e) { return e.kind == RunEvent::Kind::Slowed; }) ==
        long(run.degraded));
}

TEST_CASE("goodput: a run that failures keep from finishing stops at its bound and says so", "[goodput]") {
  ReliabilitySpec r;
  r.kinds = {kind("software", 60, 1)}; // a failure a minute, a 10-minute restart: never back for long
  r.kinds[0].per_job = true;
  r.restart_s = 600;
  r.seeds = 5;
  RunWindow w;
  w.steps = 1000; // 1,000 s without a failure: probability e^-16.7 per try
  w.step_s = 1;
  CheckpointSpec c = sync_checkpoint(1e9, 1e12);
  c.interval_s = 1e9; // no checkpoint before the end
  const GoodputReport g = simulate_goodput(r, c, w, 8);
  CHECK(g.unfinished_seeds == 5);
  CHECK(g.days_mean * 86400 == Approx(kRunCapFactor * 1000).epsilon(1e-12));
  // More failures than the event simulation's bound: refused, not simulated.
  r.kinds[0].per_device_hour = 1e6;
  w.steps = 1e6;
  CHECK_THROWS_AS(simulate_goodput(r, c, w, 8), std::invalid_argument);
}
