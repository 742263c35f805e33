// memwall: discrete-event simulator of deep-learning training clusters.
#include "commands.hpp"

#include "collectives/channels.hpp"
#include "model/input_error.hpp"
#include "sim/scenario/scenario.hpp"

#include <CLI/CLI.hpp>

#include <iostream>

namespace {

// Command-line counts within the README's input limits: a bare PositiveNumber check printed its
// bound as a 300-digit number, and `topo --gpus` took 2^32 and ran out of memory.
constexpr long long kMaxJobs = 1024;
constexpr long long kMaxShards = 100000; // as many as a sweep has points
constexpr long long kMaxTop = 10000;     // as a plan file's `top`

CLI::Range count_range(long long limit) {
  return CLI::Range(1LL, limit);
}

void add_slurm_options(CLI::App* app, memwall::cli::SlurmOptions& o) {
  app->add_flag("--slurm", o.submit, "submit as a SLURM array job (one shard per task) and a merge job into --out");
  app->add_flag("--slurm-dry-run", o.dry_run, "print the SLURM job scripts and sbatch commands instead");
  app->add_option("--shards", o.shards, "with --slurm: array tasks (default: points, at most 16)")
      ->check(count_range(kMaxShards));
  app->add_option("--sbatch-args", o.sbatch_args, "with --slurm: more sbatch options, e.g. \"-p batch -t 60\"");
}

} // namespace

int main(int argc, char** argv) {
  using namespace memwall::cli;
  CLI::App app{"memwall: simulate transformer training steps on GPU clusters (time, energy, scale-out)"};
  app.require_subcommand(0, 1);

  RunOptions run_options;
  auto* run = app.add_subcommand("run", "simulate scenario files (or every .yaml of a directory); "
                                        "prints the seed's Table 5 columns");
  run->add_option("paths", run_options.paths, "scenario files or directories (default: the worked example)");
  run->add_flag("--json", run_options.json, "one JSON object per scenario instead of the table");
  run->add_flag("--breakdown", run_options.breakdown,
                "the step's breakdown as the table (seconds per GPU per step: compute, TP, CP, EP, pipeline "
                "transfer and bubble, DP, optimizer, waiting; they sum to the step)");
  run->add_flag("--allow-oom", run_options.allow_oom, "run plans that do not fit in HBM (flagged in every output)");
  run->add_option("--trace", run_options.trace_path, "write an HDF5 trace of the run (one scenario only)");
  run->add_option("--trace-level", run_options.trace_level, "step | microbatch | layer | message (default: layer)");
  run->add_option("--timeline", run_options.timeline_path, "write a Perfetto / Chrome trace-event JSON timeline");
  run->add_option("--timeline-gpus", run_options.timeline_gpus, "GPUs shown in the timeline (default: 64)")
      ->check(count_range(memwall::sim::kMaxGpus));

  std::vector<std::string> validate_paths;
  auto* validate = app.add_subcommand("validate", "check scenario files without running them");
  validate->add_option("paths", validate_paths, "scenario files or directories")->required();

  SweepOptions sweep_options;
  auto* sweep = app.add_subcommand("sweep", "run every point of a sweep file, each in its own process");
  sweep->add_option("file", sweep_options.file, "sweep file (base scenario + sweep: keys -> lists)")->required();
  sweep->add_option("--out", sweep_options.out, "results file (.csv or .h5), rewritten after every point")->required();
  sweep->add_option("-j,--jobs", sweep_options.jobs, "points run in parallel")->check(count_range(kMaxJobs));
  sweep->add_flag("--resume", sweep_options.resume, "skip points already done in --out");
  sweep->add_option("--shard", sweep_options.shard, "run only the K-th of M slices of the points (K/M)");
  add_slurm_options(sweep, sweep_options.slurm);

  MergeOptions merge_options;
  PlanOptions plan_options;
  auto* plan = app.add_subcommand("plan", "find the fastest layout that fits, per fabric: estimate all, simulate the best");
  plan->add_option("file", plan_options.file, "plan file (a scenario with search: ranges, fabrics: [...])")->required();
  plan->add_option("--top", plan_options.top, "layouts simulated per fabric (default: the plan's top, else 5)")
      ->check(count_range(kMaxTop));
  plan->add_option("-j,--jobs", plan_options.jobs, "simulations run in parallel")->check(count_range(kMaxJobs));
  plan->add_option("--out", plan_options.out, "results file (.csv or .h5), rewritten after every simulation");
  plan->add_flag("--resume", plan_options.resume, "skip layouts already simulated in --out");
  plan->add_option("--shard", plan_options.shard, "simulate only the K-th of M slices of the layouts (K/M)");
  plan->add_option("--write-best", plan_options.write_best, "write each fabric's best layout as a scenario in DIR");
  plan->add_option("--objective", plan_options.objective,
                   "rank the simulated layouts by time (default), energy (facility J/token) or cost (the run's)")
      ->check(CLI::IsMember({"time", "energy", "cost"}));
  add_slurm_options(plan, plan_options.slurm);

  auto* merge = app.add_subcommand("merge", "join sweep shard results into one file");
  merge->add_option("--out", merge_options.out, "merged results file (.csv or .h5)")->required();
  merge->add_option("inputs", merge_options.inputs, "shard results files")->required();
  merge->add_option("--shards", merge_options.shards, "the inputs are M shards (K/M): name each missing point's shard")
      ->check(count_range(kMaxShards));
  merge->add_flag("--allow-missing", merge_options.allow_missing,
                  "exit 0 even when points are missing or failed (they are listed)");

  TopoOptions topo_options;
  auto* topo = app.add_subcommand("topo", "summarise a fabric (file or scenario) and write GraphViz");
  topo->add_option("file", topo_options.file, "fabric file (topologies/*.yaml) or scenario")->required();
  topo->add_option("--gpus", topo_options.gpus, "GPU count (star, nvlink-node and cluster fabrics)")
      ->check(count_range(memwall::sim::kMaxGpus));
  topo->add_option("--dot", topo_options.dot, "write the graph in GraphViz DOT format");

  CollbenchOptions collbench_options;
  auto* collbench = app.add_subcommand("collbench", "simulated nccl-tests: one collective per size over a fabric's "
                                                    "GPUs, with nccl-tests' columns (time, algbw, busbw)");
  collbench->add_option("target", collbench_options.target,
                        "fabric (catalog name or file), or a collbench file (scenarios/validation-nccl)")
      ->required();
  collbench->add_option("--gpus", collbench_options.gpus, "GPUs the collective spans")
      ->check(count_range(memwall::sim::kMaxGpus));
  collbench->add_option("--op", collbench_options.op,
                        "all_reduce (default), all_gather, reduce_scatter, all_to_all, broadcast, send_recv");
  collbench->add_option("--sizes", collbench_options.sizes,
                        "FROM:TO (x --factor each time) or a list A,B,C; units B, KiB, MiB, GiB, kB, MB, GB "
                        "(default 8B:8GiB)")
      ->check(CLI::Validator([](std::string& v) { return v.empty() ? std::string("an empty size list") : std::string(); },
                             "SIZES"));
  collbench->add_option("--factor", collbench_options.factor, "size multiplier in a FROM:TO range (default 2)");
  collbench->add_option("--algo", collbench_options.algorithm,
                        "ring, hierarchical, tree, halving-doubling, nvls (all_reduce; nvls in one NVLink domain "
                        "with SHARP), p2p (all_to_all, send_recv) or auto (default: the tuner's pick per size)")
      ->check(CLI::IsMember({"ring", "hierarchical", "tree", "halving-doubling", "nvls", "p2p", "auto"}));
  collbench->add_option("--protocol", collbench_options.protocol, "simple, ll128, ll or auto (default)")
      ->check(CLI::IsMember({"simple", "ll128", "ll", "auto"}));
  collbench->add_option("--channels", collbench_options.channels, "NCCL channels of rings (default: the fabric's)")
      ->check(count_range(memwall::collectives::kMaxChannels));
  collbench->add_flag("--json", collbench_options.json, "JSON instead of the table");
  collbench->add_option("--out", collbench_options.out, "also write the rows as CSV");

  auto* tables = app.add_subcommand("tables", "print the seed's Tables 1-6 from memwall's closed-form model");
  auto* gpus = app.add_subcommand("gpus", "list the GPU catalog with each GPU's balances");
  auto* models = app.add_subcommand("models", "list the model catalog with parameter counts and FLOPs per token");
  auto* curves = app.add_subcommand("curves", "print the curves of the seed's figure as JSON (analysis/seed_figure.py)");

  // A parse error quotes the user's argument: printed through the one sanitiser, on one line.
  app.failure_message([](const CLI::App*, const CLI::Error& e) {
    return "memwall: error: " + memwall::model::printable_message(e.what()) + "\n" +
           "Run with --help for more information.\n";
  });
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? kExitOk : kExitBadInput;
  }
  try {
    if (*validate)
      return validate_command(validate_paths);
    if (*sweep)
      return sweep_command(sweep_options);
    if (*plan)
      return plan_command(plan_options);
    if (*topo)
      return topo_command(topo_options);
    if (*collbench)
      return collbench_command(collbench_options);
    if (*merge)
      return merge_command(merge_options);
    if (*tables)
      return tables_command();
    if (*gpus)
      return gpus_command();
    if (*curves)
      return curves_command();
    if (*models)
      return models_command();
    return run_command(run_options); // `run`, or no subcommand: the default job
  } catch (const memwall::model::InputError& e) {
    std::cerr << "memwall: error: " << memwall::model::printable_message(e.what()) << "\n";
    return kExitBadInput;
  } catch (const std::exception& e) {
    std::cerr << "memwall: internal error: " << memwall::model::printable_message(e.what()) << "\n";
    return kExitInternal;
  }
}
