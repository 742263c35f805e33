#include "isolated_run.hpp"

#include "result_json.hpp"
#include "simulation.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <stdexcept>
#include <string>

namespace memwall::sim {

namespace {

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

nlohmann::json run_isolated(const Scenario& scenario) {
  int fds[2];
  if (::pipe(fds) != 0)
    throw std::runtime_error("cannot create a pipe for the simulation process");
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0)
    throw std::runtime_error("cannot fork the simulation process");
  if (pid == 0) {
    ::close(fds[0]);
    int code = 0;
    nlohmann::json reply;
    try {
      reply = result_to_json(scenario, run_simulation(scenario));
    } catch (const std::exception& e) {
      reply = {{"error", e.what()}};
      code = 1;
    }
    write_all(fds[1], reply.dump());
    ::close(fds[1]);
    std::fflush(nullptr);
    ::_exit(code);
  }
  ::close(fds[1]);
  std::string text;
  char buffer[65536];
  ssize_t n;
  while ((n = ::read(fds[0], buffer, sizeof buffer)) > 0)
    text.append(buffer, static_cast<size_t>(n));
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (text.empty())
    throw std::runtime_error(scenario.file + ": the simulation process died (status " + std::to_string(status) + ")");
  nlohmann::json reply = nlohmann::json::parse(text);
  if (reply.contains("error"))
    throw std::runtime_error(scenario.file + ": " + reply["error"].get<std::string>());
  return reply;
}

} // namespace memwall::sim
