#include "sim/scenario/reliability_keys.hpp"

#include "model/seed_tables.hpp"
#include "model/input_node.hpp"
#include "model/units.hpp"

#include <algorithm>
#include <cmath>
#include <optional>

namespace memwall::sim {

namespace {

using model::Dimension;
using model::FailureEffect;
using model::FailureKind;
using model::InputNode;

// Defaults a user can override, each a stated assumption (README, "Goodput over a whole run").
constexpr double kDefaultDetectionS = 600;   // PyTorch's NCCL watchdog: ProcessGroupNCCL's default timeout, 10 min
constexpr double kDefaultRestartS = 600;     // rescheduling and process start: assumed 10 min
constexpr double kDefaultRepairS = 2 * 86400; // a server or cable away for repair: assumed 2 days
constexpr double kDefaultSnapshotBytesPerS = 25e9; // device to host per GPU: PCIe Gen4 x16's usable rate
constexpr long long kDefaultSeeds = 1000;
constexpr long long kMaxSeeds = 1000000;

const char* const kKinds[] = {"gpu", "hbm", "nic", "host", "link", "switch", "software"};

// The catalog's rates (`gpu: default`, or `failures: default` for every kind it has): Llama 3's 419
// unexpected interruptions in 54 days (1,296 h) on 16,384 H100 in 2,048 servers, by root cause (arXiv
// 2407.21783, Section 3.3.4, Table 5), over the devices that failed (scenarios/goodput/llama3-405b-16k.yaml
// derives each). Per device-hour; software per job-hour. No rate for switches: Meta counts them with
// the cables (the link rate).
struct CatalogRate {
  const char* kind;
  double per_device_hour;
};
constexpr CatalogRate kCatalog[] = {
    {"gpu", 196.0 / (16384 * 1296.0)},  // faulty GPU, SRAM, system processor, SDC, thermal interface
    {"hbm", 72.0 / (16384 * 1296.0)},   // HBM3
    {"nic", 7.0 / (16384 * 1296.0)},    // one NIC per GPU
    {"host", 46.0 / (2048 * 1296.0)},   // unplanned maintenance, SSD, PSU, chassis, IO board, CPU, DRAM
    {"link", 35.0 / (32768 * 1296.0)},  // switch or cable, over the 32,768 cables of dgx-h100-ndr at 16,384 GPUs
    {"software", 63.0 / 1296.0},        // software bugs, NCCL watchdog timeouts, dependencies (per job)
};

double catalog_rate(const InputNode& at, const std::string& kind) {
  for (const CatalogRate& c : kCatalog)
    if (kind == c.kind)
      return c.per_device_hour;
  at.fail("the catalog has no rate for " + kind + " (Llama 3's Table 5 counts switches with the cables): give "
          "per_device_hour, mtbf or per_hour");
}

// Failures per device-hour: `per_device_hour: X`, `mtbf: T` (per device), `per_hour: X` (the job), or
// `default` (the catalog's).
double read_rate(const InputNode& node, const std::string& kind, bool* per_job) {
  *per_job = kind == "software";
  if (node.is_scalar()) {
    if (node.as_string() != "default")
      node.fail("expected a rate ({per_device_hour: X}, {mtbf: T}, {per_hour: X}) or default (the catalog's)");
    return catalog_rate(node, kind);
  }
  node.check_keys({"per_device_hour", "mtbf", "per_hour", "effect", "slowdown"});
  const int given = int(node.has("per_device_hour")) + int(node.has("mtbf")) + int(node.has("per_hour"));
  if (given != 1)
    node.fail("give the rate as per_device_hour, mtbf (per device) or per_hour (for the whole job): one of the three");
  *per_job = *per_job || node.has("per_hour");
  if (auto v = node.optional_child("per_device_hour"))
    return v->as_positive_number();
  if (auto v = node.optional_child("per_hour"))
    return v->as_positive_number();
  return 3600.0 / node.child("mtbf").as_positive_quantity(Dimension::Time);
}

void parse_failures(const InputNode& node, Scenario& s) {
  const bool all_default = node.is_scalar();
  if (all_default && node.as_string() != "default")
    node.fail("expected failure kinds (gpu, hbm, nic, host, link, switch, software) or default (the catalog's)");
  if (!all_default)
    node.check_keys({"gpu", "hbm", "nic", "host", "link", "switch", "software"});
  const model::FabricInventory& inv = s.inventory;
  for (const char* name : kKinds) {
    std::optional<InputNode> c = all_default ? std::optional<InputNode>(node) : node.optional_child(name);
    if (!c || (all_default && std::string(name) == "switch"))
      continue;
    bool per_job = false;
    FailureKind k;
    k.name = name;
    k.per_device_hour = read_rate(*c, name, &per_job);
    const std::string n = name;
    k.takes_server = n == "gpu" || n == "hbm" || n == "nic" || n == "host";
    k.devices = n == "gpu" || n == "hbm" ? double(s.gpus)
                : n == "nic"             ? double(inv.nics)
                : n == "host"            ? double(inv.servers)
                : n == "switch"          ? double(inv.switches)
                                         : 1.0;
    if (per_job) {
      k.devices = 1;
      k.per_job = true;
    }
    std::string effect = "restart";
    if (auto e = c->is_scalar() ? std::nullopt : c->optional_child("effect")) {
      effect = e->as_one_of({"restart", "reroute", "auto", "slow"});
      if ((effect == "reroute" || effect == "auto") && n != "link" && n != "switch")
        e->fail("only a link or a switch re-routes; a " + n + " failure restarts the job, or slows it (effect: slow)");
      if (effect == "slow" && n == "software")
        e->fail("a software failure stops the job: effect restart");
      if (effect == "slow" && !c->has("slowdown"))
        e->fail("a failure that slows the job needs slowdown: the step's extra fraction until repaired");
      if (effect == "reroute" && inv.min_switch_neighbours < 2)
        e->fail("this fabric has no second path between its switches (every switch cabled to two or more others): "
                "nothing re-routes; use restart");
    } else if (n == "link") {
      effect = "auto";
    }
    if (!c->is_scalar() && c->has("slowdown")) {
      if (effect == "restart")
        c->child("slowdown").fail("a slowdown applies to failures that do not stop the job (effect: reroute, auto "
                                  "or slow)");
      k.slowdown = c->child("slowdown").as_non_negative_number();
    } else {
      k.slowdown = -1; // derived from the simulated step (reroute_slowdown)
    }
    const bool reroutes = inv.min_switch_neighbours >= 2 && effect != "restart";
    if (n == "link" && !per_job) {
      // Cables to a GPU or NIC take that GPU off the job; cables between switches re-route where they can.
      FailureKind access = k, between = k;
      access.name = "link (GPU or NIC cable)";
      access.devices = double(inv.access_links);
      access.effect = FailureEffect::Restart;
      between.name = "link (between switches)";
      between.devices = double(inv.fabric_links);
      between.effect = reroutes ? FailureEffect::Reroute : FailureEffect::Restart;
      if (effect == "reroute" || effect == "slow") // all of them, as the user says
        access.effect = between.effect = effect == "slow" ? FailureEffect::Slow : FailureEffect::Reroute;
      for (FailureKind* part : {&access, &between})
        if (part->devices > 0)
          s.reliability.kinds.push_back(*part);
      continue;
    }
    k.effect = effect == "slow" ? FailureEffect::Slow : reroutes ? FailureEffect::Reroute : FailureEffect::Restart;
    if (k.devices > 0)
      s.reliability.kinds.push_back(k);
  }
}

void parse_checkpoint(const InputNode& c, Scenario& s) {
  c.check_keys({"bytes", "interval", "mode", "storage", "snapshot"});
  model::CheckpointSpec& k = s.checkpoint;
  k.gpus = s.gpus;
  k.bytes = kCheckpointBytesPerParam * scenario_params(s);
  if (auto v = c.optional_child("bytes"))
    k.bytes = v->as_positive_quantity(Dimension::Bytes);
  if (auto v = c.optional_child("mode"))
    k.async = v->as_one_of({"sync", "async"}) == "async";
  k.snapshot_bytes_per_s = kDefaultSnapshotBytesPerS;
  if (auto v = c.optional_child("snapshot")) {
    if (!k.async)
      v->fail("a snapshot to host memory is what an asynchronous checkpoint waits for: set mode: async");
    k.snapshot_bytes_per_s = v->as_positive_quantity(Dimension::Bandwidth);
  }
  const InputNode storage = c.child("storage");
  storage.check_keys({"write", "read", "per_node", "latency"});
  k.write_bytes_per_s = storage.child("write").as_positive_quantity(Dimension::Bandwidth);
  k.read_bytes_per_s = k.write_bytes_per_s;
  if (auto v = storage.optional_child("read"))
    k.read_bytes_per_s = v->as_positive_quantity(Dimension::Bandwidth);
  if (auto v = storage.optional_child("per_node")) { // each server's own link to storage caps the total
    const double cap = v->as_positive_quantity(Dimension::Bandwidth) * double(s.inventory.servers);
    k.write_bytes_per_s = std::min(k.write_bytes_per_s, cap);
    k.read_bytes_per_s = std::min(k.read_bytes_per_s, cap);
  }
  if (auto v = storage.optional_child("latency"))
    k.latency_s = v->as_non_negative_quantity(Dimension::Time);
  if (auto v = c.optional_child("interval")) {
    if (!(v->is_scalar() && v->as_string() == "optimal")) {
      k.interval_s = v->as_positive_quantity(Dimension::Time);
      // Shorter than a write, checkpoints would pile up (each must be written before the next).
      if (k.interval_s < k.write_s())
        v->fail(model::format("an interval of %.4g s is shorter than writing one checkpoint (%.4g s: %.4g GB at "
                              "%.4g GB/s + %.4g s latency)",
                              k.interval_s, k.write_s(), k.bytes / 1e9, k.write_bytes_per_s / 1e9, k.latency_s));
    }
  }
}

} // namespace

void parse_reliability_keys(const InputNode& root, Scenario& s) {
  const auto rel = root.optional_child("reliability");
  const auto ckpt = root.optional_child("checkpoint");
  if (!rel && !ckpt)
    return;
  const InputNode& first = rel ? *rel : *ckpt;
  if (!root.has("run"))
    first.fail("a run's goodput needs its length: add run: with tokens, steps or duration");
  if (rel && !ckpt)
    rel->fail("failures restart from the last checkpoint: add checkpoint: (at least storage: {write: ...})");
  parse_checkpoint(*ckpt, s);
  model::ReliabilitySpec& r = s.reliability;
  r.servers = s.inventory.servers;
  r.detection_s = kDefaultDetectionS;
  r.restart_s = kDefaultRestartS;
  r.repair_s = kDefaultRepairS;
  r.seeds = kDefaultSeeds;
  if (!rel)
    return;
  rel->check_keys({"failures", "detection", "restart", "repair", "spares", "without_spare", "seeds", "seed"});
  parse_failures(rel->child("failures"), s);
  if (auto v = rel->optional_child("detection"))
    r.detection_s = v->as_non_negative_quantity(Dimension::Time);
  if (auto v = rel->optional_child("restart"))
    r.restart_s = v->as_non_negative_quantity(Dimension::Time);
  if (auto v = rel->optional_child("repair"))
    r.repair_s = v->as_positive_quantity(Dimension::Time);
  if (auto v = rel->optional_child("spares")) {
    if (!(v->is_scalar() && v->as_string() == "unlimited")) {
      r.spares = v->as_non_negative_integer();
      if (r.spares > s.inventory.servers)
        v->fail("spares " + std::to_string(r.spares) + " are more servers than the cluster's " +
                std::to_string(s.inventory.servers));
    }
  }
  if (auto v = rel->optional_child("without_spare")) {
    if (r.spares < 0)
      v->fail("with unlimited spares a replacement is always there: give spares: N");
    r.shrink = v->as_one_of({"wait", "shrink"}) == "shrink";
  }
  if (auto v = rel->optional_child("seeds"))
    r.seeds = v->as_count(kMaxSeeds, "seeds");
  if (auto v = rel->optional_child("seed"))
    r.seed = static_cast<uint64_t>(v->as_non_negative_integer());
  // A run given as a duration: its failures over all seeds are known now (the checkpoints, and a run of
  // steps, once the step is simulated: model::simulate_goodput refuses those).
  const double expected = r.total_rate_per_s() * s.run.duration_s * double(r.seeds);
  if (expected > model::kMaxExpectedEvents)
    (rel->has("seeds") ? rel->child("seeds") : rel->child("failures"))
        .fail(model::format("%.3g failures expected over %lld seeds of %.4g days, more than the %.3g events the run "
                            "simulation takes: fewer seeds, a shorter run or lower rates",
                            expected, r.seeds, s.run.duration_s / 86400, model::kMaxExpectedEvents));
}

double reroute_slowdown(const Scenario& s, double exposed_share) {
  const long long u = s.inventory.min_switch_neighbours;
  return u >= 2 ? std::max(0.0, exposed_share) / double(u - 1) : 0.0;
}

model::GoodputReport scenario_goodput(const Scenario& s, const GoodputInputs& in,
                                      std::vector<model::RunEvent>* first_seed_events, GoodputCurves* curves) {
  if (s.checkpoint.write_bytes_per_s <= 0)
    return {};
  model::ReliabilitySpec r = s.reliability;
  for (FailureKind& k : r.kinds)
    if (k.slowdown < 0)
      k.slowdown = reroute_slowdown(s, in.exposed_share);
  model::RunWindow w;
  w.step_s = in.step_s;
  w.busy_j_per_step = in.facility_j_per_step;
  w.idle_w = in.idle_facility_w;
  w.duration_s = s.run.duration_s;
  if (w.duration_s <= 0)
    w.steps = s.run.steps > 0 ? s.run.steps
                              : std::ceil(s.run.tokens / (s.tokens_per_microbatch * double(s.microbatches) *
                                                          double(s.layout.data)));
  model::GoodputReport g = model::simulate_goodput(r, s.checkpoint, w, s.gpus);
  if (curves) {
    const std::vector<double> factors{0.125, 0.25, 0.5, 1, 2, 4, 8};
    const long long seeds = std::min<long long>(r.seeds, kCurveSeeds);
    if (std::isfinite(g.interval_s))
      curves->by_interval = model::goodput_vs_interval(r, s.checkpoint, w, g.interval_s, factors, seeds);
    curves->by_size = model::goodput_vs_size(r, s.checkpoint, w, s.gpus, factors, seeds);
  }
  if (first_seed_events)
    model::simulate_run(r, s.checkpoint, g.interval_steps, w, r.seed, first_seed_events);
  return g;
}

} // namespace memwall::sim
