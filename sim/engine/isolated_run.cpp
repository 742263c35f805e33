#include "sim/engine/isolated_run.hpp"

#include "sim/output/result_json.hpp"
#include "sim/engine/simulation.hpp"
#include "sim/output/safe_file.hpp"

#include <sys/prctl.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <stdexcept>
#include <string>

namespace memwall::sim {

namespace {

// State for the signal handler: the running child and the temporary files it may be writing
// (slots 0-1: the writers' own temporaries of the staged trace and timeline; 2-3: the staged files).
volatile sig_atomic_t g_child = 0;
char g_tmp_paths[4][4096];

void stop_child_and_clean(int signal_number) {
  if (g_child > 0)
    ::kill(g_child, SIGKILL);
  for (const char* path : g_tmp_paths)
    if (path[0])
      ::unlink(path);
  ::_exit(128 + signal_number);
}

void remember_tmp(int slot, const std::string& final_path, pid_t writer) {
  const std::string tmp = final_path.empty() ? "" : output::temporary_path(final_path, writer);
  std::snprintf(g_tmp_paths[slot], sizeof g_tmp_paths[slot], "%s", tmp.c_str());
}

// Where the child writes an output file: beside it under a name of the parent's, moved into place
// by the parent only once the whole run has succeeded. A run that fails after its trace was written
// (its result could not be sent, the child died) leaves no complete-looking trace behind.
std::string staged_path(const std::string& final_path) {
  return final_path.empty() ? "" : output::temporary_path(final_path, ::getpid()) + ".staged";
}

void write_all(int fd, const std::string& text) {
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n <= 0)
      return;
    done += static_cast<size_t>(n);
  }
}

} // namespace

nlohmann::json run_isolated(const Scenario& scenario, const OutputOptions& final_output) {
  OutputOptions output = final_output;
  output.trace_path = staged_path(final_output.trace_path);
  output.timeline_path = staged_path(final_output.timeline_path);
  const ForkedRun child = start_forked([&] {
    ::signal(SIGINT, SIG_DFL);
    ::signal(SIGTERM, SIG_DFL);
    ::signal(SIGHUP, SIG_DFL);
    return result_to_json(scenario, run_simulation(scenario, output));
  });
  remember_tmp(0, output.trace_path, child.pid);
  remember_tmp(1, output.timeline_path, child.pid);
  std::snprintf(g_tmp_paths[2], sizeof g_tmp_paths[2], "%s", output.trace_path.c_str());
  std::snprintf(g_tmp_paths[3], sizeof g_tmp_paths[3], "%s", output.timeline_path.c_str());
  g_child = child.pid;
  struct sigaction action {};
  action.sa_handler = stop_child_and_clean;
  struct sigaction old_int {}, old_term {};
  struct sigaction old_hup {};
  ::sigaction(SIGINT, &action, &old_int);
  ::sigaction(SIGTERM, &action, &old_term);
  ::sigaction(SIGHUP, &action, &old_hup);
  nlohmann::json reply;
  std::string error;
  try {
    reply = finish_forked(scenario.file, child);
  } catch (const std::exception& e) {
    error = e.what();
  }
  g_child = 0;
  ::sigaction(SIGINT, &old_int, nullptr);
  ::sigaction(SIGTERM, &old_term, nullptr);
  ::sigaction(SIGHUP, &old_hup, nullptr);
  // Only a run that succeeded moves its staged outputs into place; every other ending removes them,
  // and the temporary file of a child that died while writing.
  for (const auto& [staged, final_path] :
       {std::pair{output.trace_path, final_output.trace_path}, {output.timeline_path, final_output.timeline_path}})
    if (!staged.empty() && error.empty() && ::rename(staged.c_str(), final_path.c_str()) != 0)
      error = scenario.file + ": cannot move the finished " + final_path + " into place";
  for (const char* path : g_tmp_paths)
    if (path[0])
      ::unlink(path);
  if (!error.empty())
    throw std::runtime_error(error);
  return reply;
}

ForkedRun start_forked(const std::function<nlohmann::json()>& work) {
  int fds[2];
  if (::pipe(fds) != 0)
    throw std::runtime_error("cannot create a pipe for the simulation process");
  std::fflush(nullptr);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0)
    throw std::runtime_error("cannot fork the simulation process");
  if (pid == 0) {
    ::close(fds[0]);
    // The simulation dies with its parent (killed by SIGKILL or SIGHUP): no orphan writes files later.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent)
      ::_exit(1);
    int code = 0;
    nlohmann::json reply;
    try {
      reply = work();
    } catch (const std::exception& e) {
      reply = {{"error", e.what()}};
      code = 1;
    }
    // Text that is not UTF-8 (a path given on the command line) is replaced, not a reason to die.
    write_all(fds[1], reply.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    ::close(fds[1]);
    std::fflush(nullptr);
    ::_exit(code);
  }
  ::close(fds[1]);
  return {pid, fds[0]};
}

nlohmann::json finish_forked(const std::string& label, const ForkedRun& run) {
  std::string text;
  char buffer[65536];
  ssize_t n;
  while ((n = ::read(run.fd, buffer, sizeof buffer)) > 0)
    text.append(buffer, static_cast<size_t>(n));
  ::close(run.fd);
  int status = 0;
  ::waitpid(run.pid, &status, 0);
  nlohmann::json reply = text.empty() ? nlohmann::json() : nlohmann::json::parse(text, nullptr, false);
  if (text.empty() || reply.is_discarded())
    throw std::runtime_error(label + ": the simulation process died (status " + std::to_string(status) + ")");
  if (reply.is_object() && reply.contains("error"))
    throw std::runtime_error(label + ": " + reply["error"].get<std::string>());
  if (!(WIFEXITED(status) && WEXITSTATUS(status) == 0))
    throw std::runtime_error(label + ": the simulation process failed (status " + std::to_string(status) + ")");
  return reply;
}

nlohmann::json run_forked(const std::string& label, const std::function<nlohmann::json()>& work) {
  return finish_forked(label, start_forked(work));
}

} // namespace memwall::sim
