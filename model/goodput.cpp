#include "model/goodput.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>

namespace memwall::model {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// One seed's run as a small state machine; see goodput.hpp for the model.
class RunSimulation {
public:
  RunSimulation(const ReliabilitySpec& r, const CheckpointSpec& c, double interval_steps, const RunWindow& w,
                uint64_t seed, std::vector<RunEvent>* events)
      : r_(r), c_(c), k_(interval_steps), w_(w), rng_(seed), events_(events) {
    total_rate_ = r.total_rate_per_s();
    out_.by_kind.assign(r.kinds.size(), 0.0);
    spares_ = r.spares;
    end_steps_ = w.steps > 0 ? w.steps : kInf;
    end_t_ = w.duration_s > 0 ? w.duration_s : kRunCapFactor * w.steps * w.step_s;
  }

  SeedRun run() {
    next_fail_ = draw_failure_time(0);
    while (!finished_) {
      // Train to the next checkpoint (after every K-th step) or to the run's last step.
      const double boundary = std::min((std::floor(done_ / k_ + 1e-9) + 1) * k_, end_steps_);
      if (!train_to(boundary))
        continue; // a failure, or the window's end
      settle_write(t_);
      if (done_ >= end_steps_) {
        finish(t_);
        break;
      }
      checkpoint();
    }
    out_.finished = w_.steps <= 0 || done_ >= end_steps_;
    out_.steps_kept = w_.steps > 0 && out_.finished ? end_steps_ : done_;
    out_.wall_s = t_;
    out_.goodput = t_ > 0 ? out_.steps_kept * w_.step_s / t_ : 0.0;
    out_.energy_j = out_.steps_run * w_.busy_j_per_step + (out_.down_s + out_.checkpoint_wait_s) * w_.idle_w;
    record(RunEvent::Kind::End, t_, out_.steps_kept);
    return out_;
  }

private:
  double draw_failure_time(double from_s) {
    if (total_rate_ <= 0)
      return kInf;
    return from_s + std::exponential_distribution<double>(total_rate_)(rng_);
  }
  int draw_kind() {
    double u = std::uniform_real_distribution<double>(0.0, total_rate_)(rng_);
    for (size_t i = 0; i < r_.kinds.size(); ++i) {
      u -= r_.kinds[i].rate_per_s();
      if (u < 0)
        return int(i);
    }
    return int(r_.kinds.size()) - 1;
  }
  void record(RunEvent::Kind kind, double t_s, double steps_kept, double lost_s = 0, int failure = -1) {
    if (events_)
      events_->push_back({kind, t_s, steps_kept, lost_s, failure});
  }
  void finish(double t_s) {
    t_ = t_s;
    finished_ = true;
  }

  // Steps per second now: slowed by the re-routed links still out, and by the servers missing.
  double rate_now() const {
    double slow = 1;
    for (const auto& [until, fraction] : slowdowns_)
      slow += fraction;
    const double present = r_.shrink ? double(r_.servers - missing_) / double(r_.servers) : 1.0;
    return present / (w_.step_s * slow);
  }
  // The next time the rate changes (a link repaired, a server back while one is missing).
  double next_change() const {
    double next = kInf;
    for (const auto& [until, fraction] : slowdowns_)
      next = std::min(next, until);
    if (missing_ > 0 && !returns_.empty())
      next = std::min(next, *std::min_element(returns_.begin(), returns_.end()));
    return next;
  }
  // Applies the background events up to `t_s`: links repaired, servers back from repair.
  void settle(double t_s) {
    slowdowns_.erase(std::remove_if(slowdowns_.begin(), slowdowns_.end(),
                                    [&](const std::pair<double, double>& s) { return s.first <= t_s; }),
                     slowdowns_.end());
    for (size_t i = 0; i < returns_.size();) {
      if (returns_[i] <= t_s) {
        if (missing_ > 0)
          --missing_;
        else if (spares_ >= 0)
          ++spares_;
        returns_[i] = returns_.back();
        returns_.pop_back();
      } else {
        ++i;
      }
    }
  }
  // An asynchronous checkpoint counts once written.
  void settle_write(double t_s) {
    if (pending_at_ <= t_s) {
      kept_ = std::max(kept_, pending_steps_);
      record(RunEvent::Kind::Written, pending_at_, kept_);
      pending_at_ = kInf;
    }
  }

  // Trains from t_ until `target` steps are done. False when a failure or the window's end came first.
  bool train_to(double target) {
    while (done_ < target) {
      settle(t_);
      const double rate = rate_now();
      const double t_done = t_ + (target - done_) / rate;
      const double stop = std::min({t_done, next_change(), next_fail_, end_t_});
      const double progressed = stop >= t_done ? target - done_ : (stop - t_) * rate;
      const double slowed = rate < 1.0 / w_.step_s ? stop - t_ : 0.0;
      out_.slow_s += slowed;
      done_ += progressed;
      out_.steps_run += progressed;
      t_ = stop;
      if (stop >= t_done) {
        done_ = target;
        continue;
      }
      if (stop == end_t_) {
        finish(end_t_);
        return false;
      }
      if (stop == next_fail_) {
        fail(next_fail_);
        return false;
      }
    }
    return true;
  }

  // The job waits (checkpoint) until `until`; false when a failure or the window's end came first.
  bool wait_until(double until) {
    const double stop = std::min({until, next_fail_, end_t_});
    out_.checkpoint_wait_s += stop - t_;
    t_ = stop;
    if (stop == until)
      return true;
    if (stop == end_t_)
      finish(end_t_);
    else
      fail(next_fail_);
    return false;
  }

  void checkpoint() {
    record(RunEvent::Kind::Checkpoint, t_, done_);
    if (!c_.async) {
      if (wait_until(t_ + c_.write_s())) {
        kept_ = done_;
        record(RunEvent::Kind::Written, t_, kept_);
      }
      return;
    }
    // The next snapshot waits for the previous write (one host-memory copy at a time).
    if (pending_at_ < kInf && !wait_until(pending_at_))
      return;
    settle_write(t_);
    if (!wait_until(t_ + c_.snapshot_s()))
      return;
    pending_at_ = t_ + c_.write_s();
    pending_steps_ = done_;
  }

  // A server for a failed one: a spare, or (none left) go on without it or wait for a repaired one.
  // Returns when the job can run again as far as servers go.
  double replace_server(double t_s) {
    if (spares_ < 0)
      return t_s;
    if (spares_ > 0) {
      --spares_;
      returns_.push_back(t_s + r_.repair_s);
      return t_s;
    }
    if (r_.shrink) {
      ++missing_;
      returns_.push_back(t_s + r_.repair_s);
      return t_s;
    }
    // Wait for the first server back from repair; it replaces the failed one, which goes to repair.
    auto first = std::min_element(returns_.begin(), returns_.end());
    double back = t_s + r_.repair_s;
    if (first != returns_.end()) {
      back = *first;
      *first = t_s + r_.repair_s;
    }
    return back;
  }

  void fail(double tf) {
    settle(tf);
    settle_write(tf);
    double resume = tf; // when the job runs again
    bool down = false;
    for (double at = tf; at < kInf;) {
      const int k = draw_kind();
      const FailureKind& kind = r_.kinds[size_t(k)];
      next_fail_ = draw_failure_time(at);
      if (kind.effect != FailureEffect::Restart) {
        out_.degraded += 1;
        out_.by_kind[size_t(k)] += 1;
        slowdowns_.emplace_back(at + r_.repair_s, kind.slowdown);
        record(kind.effect == FailureEffect::Reroute ? RunEvent::Kind::Reroute : RunEvent::Kind::Slowed, at, kept_, 0,
               k);
      } else {
        out_.interruptions += 1;
        out_.by_kind[size_t(k)] += 1;
        double lost = 0;
        if (!down) { // the first failure of a down period loses the work since the last written checkpoint
          settle_write(at);
          lost = (done_ - kept_) * w_.step_s;
          out_.lost_s += lost;
          done_ = kept_;
          pending_at_ = kInf; // a checkpoint not yet written is lost with the job
          down = true;
        }
        record(RunEvent::Kind::Failure, at, kept_, lost, k);
        double back = at + r_.detection_s + r_.restart_s + c_.read_s();
        if (kind.takes_server)
          back = std::max(back, replace_server(at) + r_.restart_s + c_.read_s());
        resume = std::max(resume, back); // a failure while restarting starts the restart again
      }
      // Further failures inside the down period stop it again; after it, training goes on.
      if (!down || next_fail_ >= resume || next_fail_ >= end_t_)
        break;
      at = next_fail_;
      settle(at);
    }
    if (down) {
      const double until = std::min(resume, end_t_);
      out_.down_s += until - tf;
      t_ = until;
      if (until >= end_t_) {
        finish(end_t_);
        return;
      }
      record(RunEvent::Kind::Resumed, t_, kept_);
    } else {
      t_ = tf;
    }
  }

  const ReliabilitySpec& r_;
  const CheckpointSpec& c_;
  double k_;
  const RunWindow& w_;
  std::mt19937_64 rng_;
  std::vector<RunEvent>* events_;
  SeedRun out_;
  double total_rate_ = 0;
  double t_ = 0, done_ = 0, kept_ = 0;
  double next_fail_ = kInf;
  double pending_at_ = kInf, pending_steps_ = 0;
  double end_steps_ = kInf, end_t_ = kInf;
  bool finished_ = false;
  long long spares_ = -1, missing_ = 0;
  std::vector<double> returns_;                       // when servers in repair come back
  std::vector<std::pair<double, double>> slowdowns_;  // (until, fraction) per re-routed link
};

double percentile(std::vector<double> v, double p) {
  if (v.empty())
    return 0;
  std::sort(v.begin(), v.end());
  const double pos = p * double(v.size() - 1);
  const size_t lo = size_t(std::floor(pos));
  const size_t hi = std::min(v.size() - 1, lo + 1);
  return v[lo] + (pos - double(lo)) * (v[hi] - v[lo]);
}

} // namespace

double ReliabilitySpec::restart_rate_per_s() const {
  double rate = 0;
  for (const FailureKind& k : kinds)
    if (k.effect == FailureEffect::Restart)
      rate += k.rate_per_s();
  return rate;
}

double ReliabilitySpec::total_rate_per_s() const {
  double rate = 0;
  for (const FailureKind& k : kinds)
    rate += k.rate_per_s();
  return rate;
}

double young_interval_s(double checkpoint_s, double mtbf_s) { return std::sqrt(2.0 * checkpoint_s * mtbf_s); }

const char* event_name(RunEvent::Kind kind) {
  switch (kind) {
  case RunEvent::Kind::Checkpoint: return "checkpoint";
  case RunEvent::Kind::Written: return "written";
  case RunEvent::Kind::Failure: return "failure";
  case RunEvent::Kind::Reroute: return "reroute";
  case RunEvent::Kind::Slowed: return "slowed";
  case RunEvent::Kind::Resumed: return "resumed";
  case RunEvent::Kind::End: return "end";
  }
  return "?";
}

SeedRun simulate_run(const ReliabilitySpec& reliability, const CheckpointSpec& checkpoint, double interval_steps,
                     const RunWindow& window, uint64_t seed, std::vector<RunEvent>* events) {
  return RunSimulation(reliability, checkpoint, std::max(1.0, interval_steps), window, seed, events).run();
}

GoodputReport simulate_goodput(const ReliabilitySpec& reliability, const CheckpointSpec& checkpoint,
                               const RunWindow& window, long long gpus) {
  GoodputReport g;
  const double restart_rate = reliability.restart_rate_per_s();
  g.mtbf_s = restart_rate > 0 ? 1.0 / restart_rate : kInf;
  g.checkpoint_write_s = checkpoint.write_s();
  g.checkpoint_read_s = checkpoint.read_s();
  g.checkpoint_blocking_s = checkpoint.blocking_s();
  g.young_interval_s = restart_rate > 0 ? young_interval_s(g.checkpoint_blocking_s, g.mtbf_s) : kInf;
  // Young's interval, but never shorter than a write (asynchronous writes would queue up).
  g.interval_s = checkpoint.interval_s > 0 ? checkpoint.interval_s
                                           : std::max(g.young_interval_s, checkpoint.async ? g.checkpoint_write_s : 0.0);
  g.interval_steps = std::isfinite(g.interval_s) ? std::max(1.0, std::round(g.interval_s / window.step_s)) : kInf;
  const double horizon_s = window.duration_s > 0 ? window.duration_s : kRunCapFactor * window.steps * window.step_s;
  const double per_seed = reliability.total_rate_per_s() * horizon_s +
                          (std::isfinite(g.interval_steps) ? horizon_s / (g.interval_steps * window.step_s) : 0.0);
  const double expected = per_seed * double(std::max<long long>(1, reliability.seeds));
  if (expected > kMaxExpectedEvents)
    throw std::invalid_argument("the run would simulate about " + std::to_string(static_cast<long long>(expected)) +
                                " failures and checkpoints over its seeds (more than " +
                                std::to_string(static_cast<long long>(kMaxExpectedEvents)) +
                                "): fewer seeds, a shorter run, lower rates or a longer checkpoint interval");
  const double k = std::isfinite(g.interval_steps) ? g.interval_steps : 1e300;
  const long long seeds = std::max<long long>(1, reliability.seeds);
  std::vector<double> goodputs, interruptions;
  g.by_kind_mean.assign(reliability.kinds.size(), 0.0);
  for (long long i = 0; i < seeds; ++i) {
    const SeedRun run = RunSimulation(reliability, checkpoint, k, window, reliability.seed + uint64_t(i), nullptr).run();
    const double days = run.wall_s / 86400.0;
    g.days.push_back(days);
    goodputs.push_back(run.goodput);
    interruptions.push_back(run.interruptions);
    g.degraded_mean += run.degraded;
    for (size_t j = 0; j < run.by_kind.size(); ++j)
      g.by_kind_mean[j] += run.by_kind[j];
    g.steps_mean += run.steps_kept;
    g.unfinished_seeds += run.finished ? 0 : 1;
    g.gpu_hours_mean += double(gpus) * run.wall_s / 3600.0;
    g.energy_mwh_mean += run.energy_j / 3.6e9;
    g.lost_h_mean += run.lost_s / 3600.0;
    g.down_h_mean += run.down_s / 3600.0;
    g.checkpoint_h_mean += run.checkpoint_wait_s / 3600.0;
  }
  const double n = double(seeds);
  for (double* v : {&g.degraded_mean, &g.steps_mean, &g.gpu_hours_mean, &g.energy_mwh_mean, &g.lost_h_mean,
                    &g.down_h_mean, &g.checkpoint_h_mean})
    *v /= n;
  for (double& v : g.by_kind_mean)
    v /= n;
  double sum = 0, sum2 = 0;
  for (double x : interruptions) {
    sum += x;
    sum2 += x * x;
  }
  g.interruptions_mean = sum / n;
  const double var = seeds > 1 ? std::max(0.0, (sum2 - n * g.interruptions_mean * g.interruptions_mean) / (n - 1)) : 0;
  g.interruptions_sem = std::sqrt(var / n);
  double gsum = 0;
  for (double x : goodputs)
    gsum += x;
  g.goodput_mean = gsum / n;
  g.goodput_p10 = percentile(goodputs, 0.10);
  g.goodput_p50 = percentile(goodputs, 0.50);
  g.goodputs = std::move(goodputs);
  double dsum = 0;
  for (double d : g.days)
    dsum += d;
  g.days_mean = dsum / n;
  g.days_p50 = percentile(g.days, 0.50);
  g.days_p90 = percentile(g.days, 0.90);
  return g;
}

std::vector<CurvePoint> goodput_vs_interval(const ReliabilitySpec& reliability, const CheckpointSpec& checkpoint,
                                            const RunWindow& window, double interval_s,
                                            const std::vector<double>& factors, long long seeds) {
  ReliabilitySpec r = reliability;
  r.seeds = seeds;
  std::vector<CurvePoint> curve;
  for (double f : factors) {
    CheckpointSpec c = checkpoint;
    c.interval_s = std::max(f * interval_s, window.step_s);
    const double steps = std::max(1.0, std::round(c.interval_s / window.step_s));
    if (!curve.empty() && steps * window.step_s == curve.back().x)
      continue; // the same whole number of steps as the point before
    const GoodputReport g = simulate_goodput(r, c, window, checkpoint.gpus);
    curve.push_back({g.interval_steps * window.step_s, g.goodput_mean, g.days_mean});
  }
  return curve;
}

std::vector<CurvePoint> goodput_vs_size(const ReliabilitySpec& reliability, const CheckpointSpec& checkpoint,
                                        const RunWindow& window, long long gpus, const std::vector<double>& factors,
                                        long long seeds) {
  std::vector<CurvePoint> curve;
  for (double f : factors) {
    ReliabilitySpec r = reliability;
    r.seeds = seeds;
    r.servers = std::max<long long>(1, (long long)std::llround(double(r.servers) * f));
    for (FailureKind& k : r.kinds)
      if (!k.per_job)
        k.devices *= f;
    CheckpointSpec c = checkpoint;
    c.gpus = std::max<long long>(1, (long long)std::llround(double(gpus) * f));
    const GoodputReport g = simulate_goodput(r, c, window, c.gpus);
    curve.push_back({double(c.gpus), g.goodput_mean, g.days_mean});
  }
  return curve;
}

} // namespace memwall::model
