#include "slurm_submit.hpp"

#include "model/input_error.hpp"
#include "results_hdf5.hpp"
#include "sim/output/safe_file.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

namespace memwall::sweep {

namespace fs = std::filesystem;

namespace {

std::string quote(const std::string& s) {
  std::string out = "'";
  for (char c : s)
    out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string self_executable() {
  std::error_code ec;
  const auto path = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string("memwall") : path.string();
}

// Runs a command, returns its stdout; throws with its stderr when it fails.
std::string run_capture(const std::vector<std::string>& argv) {
  std::string command;
  for (const auto& a : argv) {
    if (!command.empty())
      command += ' ';
    command += quote(a);
  }
  command += " 2>&1";
  FILE* pipe = ::popen(command.c_str(), "r");
  if (!pipe)
    throw std::runtime_error("cannot run " + argv.front());
  std::string text;
  char buffer[4096];
  while (size_t n = std::fread(buffer, 1, sizeof buffer, pipe))
    text.append(buffer, n);
  const int status = ::pclose(pipe);
  if (status != 0)
    throw std::runtime_error(argv.front() + " failed (" + command + "): " + text);
  return text;
}

bool on_path(const std::string& program) {
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "");
  for (std::string dir; std::getline(dirs, dir, ':');)
    if (!dir.empty() && ::access((fs::path(dir) / program).c_str(), X_OK) == 0)
      return true;
  return false;
}

// Whether task k's shard has an ok row for each of its points.
bool shard_complete(const std::string& path, long long k, long long shards, long long points) {
  if (!fs::exists(path))
    return false;
  try {
    const ResultsTable t = load_results(path);
    for (long long p = k - 1; p < points; p += shards)
      if (!t.has_ok_row(p))
        return false;
    return true;
  } catch (const std::exception&) {
    return false; // unreadable: run it again
  }
}

std::string task_list(const std::vector<long long>& tasks) {
  std::string text;
  for (size_t i = 0; i < tasks.size(); ++i) {
    size_t j = i;
    while (j + 1 < tasks.size() && tasks[j + 1] == tasks[j] + 1)
      ++j;
    if (!text.empty())
      text += ',';
    text += std::to_string(tasks[i]);
    if (j > i)
      text.append("-").append(std::to_string(tasks[j]));
    i = j;
  }
  return text;
}

} // namespace

void submit_to_slurm(const SlurmRequest& r) {
  if (r.points < 1)
    throw model::InputError(r.file, 0, "--slurm", "nothing to run");
  const long long shards = r.shards > 0 ? r.shards : std::min<long long>(r.points, 16);
  if (shards > r.points)
    throw model::InputError("--shards", 0, "",
                            std::to_string(shards) + " tasks for " + std::to_string(r.points) +
                                " points: some tasks would have nothing to do");
  const std::string out = fs::absolute(r.out).lexically_normal().string();
  const std::string file = fs::absolute(r.file).lexically_normal().string();
  const fs::path dir = out + ".slurm";
  const std::string ext = fs::path(out).extension().string();
  // The folder keeps its shard count: shards of another count would split the points differently.
  const fs::path count_file = dir / "shards";
  if (fs::exists(count_file)) {
    std::ifstream in(count_file);
    long long previous = 0;
    in >> previous;
    if (previous != shards)
      throw model::InputError("--shards", 0, "",
                              dir.string() + " holds the shards of " + std::to_string(previous) +
                                  " tasks; submit with --shards " + std::to_string(previous) +
                                  " or remove it");
  }
  std::vector<long long> tasks;
  for (long long k = 1; k <= shards; ++k)
    if (!shard_complete((dir / ("shard-" + std::to_string(k) + ext)).string(), k, shards, r.points))
      tasks.push_back(k);

  const std::string memwall = self_executable();
  std::string task_command = quote(memwall) + " " + r.command + " " + quote(file) +
                             " --shard \"${SLURM_ARRAY_TASK_ID}/" + std::to_string(shards) +
                             "\" --resume -j " + std::to_string(r.jobs_per_task) + " --out " +
                             quote((dir / "shard-").string()) + "\"${SLURM_ARRAY_TASK_ID}\"" + quote(ext);
  for (const auto& a : r.task_args)
    task_command.append(" ").append(quote(a));
  const std::string array_script = "#!/bin/bash\n"
                                   "# memwall " +
                                   r.command + " " + file + ": task K of " + std::to_string(shards) +
                                   " runs the points whose index is K-1 modulo " + std::to_string(shards) +
                                   " (written by memwall " + r.command +
                                   " --slurm)\n"
                                   "#SBATCH --job-name=memwall-" +
                                   r.command +
                                   "\n"
                                   "#SBATCH --output=" +
                                   (dir / "task-%a.out").string() +
                                   "\n"
                                   "#SBATCH --cpus-per-task=" +
                                   std::to_string(r.jobs_per_task) +
                                   "\n"
                                   "set -eu\n"
                                   "exec " +
                                   task_command + "\n";
  std::string merge_command = quote(memwall) + " merge --shards " + std::to_string(shards) + " --out " +
                              quote(out) + " \"${shards[@]}\"";
  std::string report;
  if (!r.report_args.empty()) {
    report = quote(memwall);
    for (const auto& a : r.report_args)
      report.append(" ").append(quote(a));
    report += "\n";
  }
  const std::string merge_script =
      "#!/bin/bash\n"
      "# Joins the shards of memwall " +
      r.command + " " + file + " into " + out +
      " once every array task has ended (afterany: a failed task's points are reported, not waited for)\n"
      "#SBATCH --job-name=memwall-merge\n"
      "#SBATCH --output=" +
      (dir / "merge.out").string() +
      "\n"
      "set -eu\n"
      "shopt -s nullglob\n"
      "shards=(" +
      quote((dir / "shard-").string()) + "*" + quote(ext) +
      ")\n"
      "if [ ${#shards[@]} -eq 0 ]; then echo 'memwall: error: no task wrote its shard; see the task-*.out "
      "logs' >&2; exit 1; fi\n" +
      merge_command + "\n" + report;

  std::vector<std::string> extra;
  std::istringstream words(r.sbatch_args);
  for (std::string w; words >> w;)
    extra.push_back(w);
  if (r.dry_run) {
    std::cout << "# " << (dir / "array.sh").string() << "\n"
              << array_script << "\n# " << (dir / "merge.sh").string() << "\n"
              << merge_script << "\n# would submit:\n";
    if (!tasks.empty())
      std::cout << "sbatch --parsable --array=" << task_list(tasks) << " " << r.sbatch_args << " "
                << (dir / "array.sh").string() << "\n";
    std::cout << "sbatch --parsable" << (tasks.empty() ? "" : " --dependency=afterany:ARRAY_JOB") << " "
              << r.sbatch_args << " " << (dir / "merge.sh").string() << "\n";
    return;
  }
  if (!on_path("sbatch"))
    throw model::InputError("--slurm", 0, "",
                            "sbatch is not on PATH (is this a SLURM login node?); --slurm-dry-run "
                            "prints the job scripts");
  fs::create_directories(dir);
  output::write_atomically(count_file.string(), std::to_string(shards) + "\n");
  output::write_atomically((dir / "array.sh").string(), array_script);
  output::write_atomically((dir / "merge.sh").string(), merge_script);
  auto job_id = [](const std::string& text) {
    const std::string first = text.substr(0, text.find_first_of(";\n"));
    return first;
  };
  std::string array_job;
  if (!tasks.empty()) {
    std::vector<std::string> argv{"sbatch", "--parsable", "--array=" + task_list(tasks)};
    argv.insert(argv.end(), extra.begin(), extra.end());
    argv.push_back((dir / "array.sh").string());
    array_job = job_id(run_capture(argv));
  }
  std::vector<std::string> argv{"sbatch", "--parsable"};
  if (!array_job.empty())
    argv.push_back("--dependency=afterany:" + array_job);
  argv.insert(argv.end(), extra.begin(), extra.end());
  argv.push_back((dir / "merge.sh").string());
  const std::string merge_job = job_id(run_capture(argv));
  if (!array_job.empty())
    std::cerr << "memwall: submitted array job " << array_job << " (tasks " << task_list(tasks) << " of "
              << shards << ", " << r.points << " points in all)";
  else
    std::cerr << "memwall: every shard is complete; submitted only the merge";
  std::cerr << " and merge job " << merge_job << (array_job.empty() ? "" : " (after the array)") << "\n"
            << "memwall: follow with: squeue -j " << (array_job.empty() ? "" : array_job + ",") << merge_job
            << "; logs: " << (dir / "task-*.out").string() << ", " << (dir / "merge.out").string() << "\n"
            << "memwall: results: " << out << " when job " << merge_job
            << " ends; the same command again submits only what is missing\n";
  std::cout << (array_job.empty() ? "" : array_job + " ") << merge_job << "\n";
}

} // namespace memwall::sweep
