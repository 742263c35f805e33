// `--slurm`: a sweep's (or a plan's) points as a SLURM array job, one shard per task, and a merge job
// that runs when every task has ended. Everything lives in `<out>.slurm/` beside the results file:
// the two job scripts, each task's shard results and log, the merge's log. The folder must be on a
// filesystem the compute nodes share (as the results file's folder usually is).
//
// Resubmitting the same command submits only the tasks whose shard is not complete (each task also
// runs with --resume, so a task resumes its own shard), then the merge again.
#pragma once

#include <string>
#include <vector>

namespace memwall::sweep {

struct SlurmRequest {
  std::string command;                  // "sweep" or "plan"
  std::string file;                     // the sweep or plan file
  std::string out;                      // the merged results file
  long long points = 0;                 // the whole sweep's (plan's simulated) points
  long long shards = 0;                 // array tasks (0: min(points, 16))
  int jobs_per_task = 1;                // processes per task (-j), also its --cpus-per-task
  std::vector<std::string> task_args;   // more arguments of each task's memwall command (plan: --top K)
  std::vector<std::string> report_args; // plan: the command that prints the report after the merge
  std::string sbatch_args;              // extra sbatch options, split at spaces
  bool dry_run = false;                 // print the scripts and the sbatch commands, submit nothing
};

// Writes the scripts, submits (unless a dry run), prints the job ids and how to follow them.
// Throws InputError for bad options (the folder made with another shard count, no sbatch), and
// std::runtime_error when sbatch fails.
void submit_to_slurm(const SlurmRequest& request);

} // namespace memwall::sweep
