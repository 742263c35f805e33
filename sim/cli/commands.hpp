// The `memwall` subcommands. Each returns the process exit code: 0 success, 2 bad input, 1 internal error.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <string>
#include <vector>

namespace memwall::sim {
struct OutputOptions;
namespace jobs {
struct JobsSpec;
}
} // namespace memwall::sim

namespace memwall::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitInternal = 1;
inline constexpr int kExitBadInput = 2;

struct RunOptions {
  std::vector<std::string> paths;
  bool json = false;
  bool breakdown = false; // the step's breakdown as the table instead of the seed's columns
  std::string trace_path;
  std::string trace_level = "layer";
  std::string timeline_path;
  long long timeline_gpus = 64;
  bool allow_oom = false;
};

// `--slurm`: submit the work as a SLURM array job and a merge job instead of running it here.
struct SlurmOptions {
  bool submit = false;
  bool dry_run = false;    // print the job scripts instead
  long long shards = 0;    // array tasks (0: up to 16)
  std::string sbatch_args; // extra sbatch options
  bool any() const { return submit || dry_run; }
};

struct SweepOptions {
  std::string file;
  std::string out;
  int jobs = 1;
  bool resume = false;
  std::string shard = "1/1";
  SlurmOptions slurm;
};

struct TopoOptions {
  std::string file;
  long long gpus = 0;
  std::string dot;
};

// `memwall collbench TARGET`: TARGET a fabric (catalog name or file) with the flags below, or a
// collbench file that sets its own case (scenarios/validation-nccl).
struct CollbenchOptions {
  std::string target;
  long long gpus = 0;
  std::string op;    // empty: all_reduce
  std::string sizes; // empty: 8B:8GiB
  double factor = 2;
  std::string algorithm = "auto";
  std::string protocol = "auto";
  long long channels = 0;
  bool json = false;
  std::string out;
};
int collbench_command(const CollbenchOptions& options);

int run_command(const RunOptions& options);
// `--breakdown`'s table: its header, and a run's row from its --json record.
std::string breakdown_header();
std::string breakdown_row(const std::string& name, const nlohmann::json& record);
// `run` of a jobs file (a top-level `jobs:`): several jobs on one fabric.
// `spec` loaded, its memory checked and its warnings printed by run_command.
int jobs_command(const sim::jobs::JobsSpec& spec, const RunOptions& options, const sim::OutputOptions& output);
int topo_command(const TopoOptions& options);
int sweep_command(const SweepOptions& options);
struct MergeOptions {
  std::string out;
  std::vector<std::string> inputs;
  bool allow_missing = false;
  long long shards = 0; // when the inputs are the M shards of a SLURM array: name each missing point's task
};

int merge_command(const MergeOptions& options);

struct PlanOptions {
  std::string file;
  std::string out;        // results file (optional unless sharded or resumed)
  long long top = 0;      // layouts simulated per fabric (0: the plan file's `top`, default 5)
  int jobs = 1;
  bool resume = false;
  std::string shard = "1/1";
  std::string write_best; // folder for each fabric's best layout as a scenario
  std::string objective = "time"; // time, energy or cost (plan_spec.hpp)
  SlurmOptions slurm;
};
int plan_command(const PlanOptions& options);
int validate_command(const std::vector<std::string>& paths);
int tables_command();
int gpus_command();
int models_command();
int curves_command();

// Where the shipped scenarios live (fixed at build time).
std::string default_scenario_path();

} // namespace memwall::cli
