// Runs scenarios (sweep points, planned layouts) each in its own `memwall run --json` process, at most
// `jobs` at a time, in a scratch folder removed however the run ends. SimGrid allows one engine per
// process, and a crash of one point must not take the others with it.
#pragma once

#include <nlohmann/json.hpp>

#include <functional>
#include <string>
#include <vector>

namespace memwall::sweep {

struct PointJob {
  long long index = 0;       // the caller's name for the point
  std::string scenario_yaml; // the scenario to run
  std::string label;         // replaces the scratch file's name in error messages ("sweep.yaml point 3")
};

// `error` is empty and `record` the run's JSON record on success; else `error` is the worker's last
// error line and `record` null. Called in completion order. Throws Interrupted (process_pool.hpp)
// on SIGINT / SIGTERM / SIGHUP, after the workers are killed.
using PointDone =
    std::function<void(const PointJob& job, const std::string& error, const nlohmann::json* record)>;
void run_points(const std::vector<PointJob>& points, int jobs, const PointDone& on_done);

class Progress;
// run_points with the progress display finished however it ends, and the end said: returns -1 when
// every point ran; else the exit code (128 + signal after an interruption, 1 after an error) after
// saying so ("memwall: <what> interrupted ...; the points done so far are in <saved_in>").
int run_points_reporting(const std::vector<PointJob>& points, int jobs, Progress& progress, const std::string& what,
                         const std::string& saved_in, const PointDone& on_done);

} // namespace memwall::sweep
