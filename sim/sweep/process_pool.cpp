#include "process_pool.hpp"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <map>
#include <stdexcept>

namespace memwall::sweep {

namespace {

pid_t spawn(const Job& job) {
  std::vector<char*> argv;
  for (const auto& a : job.argv)
    argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0)
    throw std::runtime_error("cannot fork a sweep worker");
  if (pid == 0) {
    const int out = ::open(job.stdout_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int err = ::open(job.stderr_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (out < 0 || err < 0)
      ::_exit(127);
    ::dup2(out, STDOUT_FILENO);
    ::dup2(err, STDERR_FILENO);
    const int devnull = ::open("/dev/null", O_RDONLY);
    if (devnull >= 0)
      ::dup2(devnull, STDIN_FILENO);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  return pid;
}

} // namespace

void run_jobs(const std::vector<Job>& jobs, int max_parallel, const std::function<void(const JobOutcome&)>& on_done) {
  if (max_parallel < 1)
    max_parallel = 1;
  std::map<pid_t, size_t> running;
  size_t next = 0;
  while (next < jobs.size() || !running.empty()) {
    while (next < jobs.size() && static_cast<int>(running.size()) < max_parallel) {
      running[spawn(jobs[next])] = next;
      ++next;
    }
    int status = 0;
    const pid_t pid = ::waitpid(-1, &status, 0);
    if (pid < 0)
      throw std::runtime_error("lost track of the sweep workers");
    auto it = running.find(pid);
    if (it == running.end())
      continue;
    JobOutcome outcome;
    outcome.job = it->second;
    outcome.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    running.erase(it);
    on_done(outcome);
  }
}

} // namespace memwall::sweep
