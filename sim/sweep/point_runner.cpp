#include "point_runner.hpp"

#include "process_pool.hpp"
#include "progress.hpp"
#include "model/input_error.hpp"
#include "sim/output/safe_file.hpp"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <iostream>

namespace memwall::sweep {

namespace fs = std::filesystem;

namespace {

std::string last_line(const std::string& path) {
  std::ifstream in(path);
  std::string line, last;
  while (std::getline(in, line))
    if (!line.empty())
      last = line;
  return last.rfind("memwall: error: ", 0) == 0 ? last.substr(16) : last;
}

// The scratch folder (point files, worker output), removed however the run ends; folders of runs
// whose process is gone are removed too.
class ScratchDir {
public:
  ScratchDir() {
    const fs::path tmp = fs::temp_directory_path();
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(tmp, ec)) {
      const std::string name = entry.path().filename().string();
      if (name.rfind("memwall-sweep-", 0) != 0)
        continue;
      const std::string pid = name.substr(14);
      if (!pid.empty() && pid.size() < 10 && pid.find_first_not_of("0123456789") == std::string::npos &&
          ::kill(static_cast<pid_t>(std::stol(pid)), 0) != 0 && errno == ESRCH)
        fs::remove_all(entry.path(), ec);
    }
    path_ = tmp / ("memwall-sweep-" + std::to_string(::getpid()));
    fs::create_directories(path_);
  }
  ~ScratchDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const fs::path& path() const { return path_; }

private:
  fs::path path_;
};

std::string self_executable() {
  std::error_code ec;
  const auto path = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string("memwall") : path.string();
}

} // namespace

void run_points(const std::vector<PointJob>& points, int jobs, const PointDone& on_done) {
  const ScratchDir scratch;
  std::vector<Job> work;
  for (const PointJob& p : points) {
    const std::string base = (scratch.path() / ("point-" + std::to_string(p.index))).string();
    output::write_atomically(base + ".yaml", p.scenario_yaml);
    work.push_back({{self_executable(), "run", "--json", base + ".yaml"}, base + ".out", base + ".err"});
  }
  run_jobs(work, jobs, [&](const JobOutcome& o) {
    const PointJob& p = points[o.job];
    std::ifstream out(work[o.job].stdout_path);
    const std::string text((std::istreambuf_iterator<char>(out)), std::istreambuf_iterator<char>());
    std::string error;
    nlohmann::json record;
    if (o.exit_code == 0) {
      try {
        record = nlohmann::json::parse(text);
      } catch (const std::exception& e) {
        error = std::string("unreadable result: ") + e.what();
      }
    } else {
      // Errors name the point, not its scratch file.
      error = last_line(work[o.job].stderr_path);
      const std::string scratch_file = work[o.job].argv.back();
      for (size_t at; (at = error.find(scratch_file)) != std::string::npos;)
        error.replace(at, scratch_file.size(), p.label);
      if (error.empty())
        error = "worker exited with code " + std::to_string(o.exit_code);
    }
    on_done(p, error, error.empty() ? &record : nullptr);
  });
}

int run_points_reporting(const std::vector<PointJob>& points, int jobs, Progress& progress, const std::string& what,
                         const std::string& saved_in, const PointDone& on_done) {
  try {
    run_points(points, jobs, on_done);
  } catch (const Interrupted& stop) {
    progress.finish();
    std::cerr << "memwall: " << what << " interrupted (signal " << stop.signal_number << ")"
              << (saved_in.empty() ? "" : "; the points done so far are in " + saved_in + " (--resume runs the rest)")
              << "\n";
    return 128 + stop.signal_number;
  } catch (const std::exception& e) {
    progress.finish();
    std::cerr << "memwall: error: " << memwall::model::printable_message(e.what()) << "\n";
    return 1;
  }
  progress.finish();
  return -1;
}

} // namespace memwall::sweep
