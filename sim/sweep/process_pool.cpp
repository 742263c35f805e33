#include "process_pool.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <map>
#include <stdexcept>

namespace memwall::sweep {

namespace {

pid_t spawn(const Job& job) {
  std::vector<char*> argv;
  for (const auto& a : job.argv)
    argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0)
    throw std::runtime_error("cannot fork a sweep worker");
  if (pid == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent)
      ::_exit(127);
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

volatile sig_atomic_t g_stop_signal = 0;

void note_stop(int signal_number) { g_stop_signal = signal_number; }

// Stop signals interrupt waitpid (no SA_RESTART) instead of killing the sweep, so that it can kill
// its workers and clean up; the previous handlers come back at the end.
class StopSignals {
public:
  StopSignals() {
    g_stop_signal = 0;
    struct sigaction action {};
    action.sa_handler = note_stop;
    for (size_t i = 0; i < 3; ++i)
      ::sigaction(kSignals[i], &action, &old_[i]);
  }
  ~StopSignals() {
    for (size_t i = 0; i < 3; ++i)
      ::sigaction(kSignals[i], &old_[i], nullptr);
  }
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

private:
  static constexpr int kSignals[3] = {SIGINT, SIGTERM, SIGHUP};
  struct sigaction old_[3] {};
};

void kill_all(std::map<pid_t, size_t>& running) {
  for (const auto& [pid, job] : running)
    ::kill(pid, SIGKILL);
  for (const auto& [pid, job] : running)
    ::waitpid(pid, nullptr, 0);
  running.clear();
}

// Starts jobs while slots are free and reports each as it ends, until all have ended.
void loop(const std::vector<Job>& jobs, int max_parallel, const std::function<void(const JobOutcome&)>& on_done,
          std::map<pid_t, size_t>& running, size_t& next) {
  while (next < jobs.size() || !running.empty()) {
    while (next < jobs.size() && static_cast<int>(running.size()) < max_parallel && !g_stop_signal) {
      running[spawn(jobs[next])] = next;
      ++next;
    }
    if (g_stop_signal)
      throw Interrupted{g_stop_signal};
    int status = 0;
    const pid_t pid = ::waitpid(-1, &status, 0);
    if (pid < 0 && errno == EINTR)
      continue;
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

} // namespace

void run_jobs(const std::vector<Job>& jobs, int max_parallel, const std::function<void(const JobOutcome&)>& on_done) {
  if (max_parallel < 1)
    max_parallel = 1;
  const StopSignals stop_signals;
  std::map<pid_t, size_t> running;
  size_t next = 0;
  try {
    loop(jobs, max_parallel, on_done, running, next);
  } catch (...) {
    kill_all(running);
    throw;
  }
}

} // namespace memwall::sweep
