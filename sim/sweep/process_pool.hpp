// Runs commands as child processes, at most `jobs` at a time; each child's stdout and stderr go to
// files, so no pipe can fill up. Used by sweeps: SimGrid allows one engine per process.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace memwall::sweep {

struct Job {
  std::vector<std::string> argv;
  std::string stdout_path;
  std::string stderr_path;
};

struct JobOutcome {
  size_t job = 0;   // index into the jobs given
  int exit_code = 0; // 128 + signal when killed
};

// Thrown by run_jobs when SIGINT, SIGTERM or SIGHUP arrived: the workers are killed and reaped.
struct Interrupted {
  int signal_number;
};

// Calls `on_done` as each job finishes (in completion order). Returns when all are done. If `on_done`
// throws, or a stop signal arrives, the running workers are killed first (workers also die with
// this process, should it be killed outright).
void run_jobs(const std::vector<Job>& jobs, int max_parallel, const std::function<void(const JobOutcome&)>& on_done);

} // namespace memwall::sweep
