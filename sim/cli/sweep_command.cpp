#include "commands.hpp"

#include "model/input_error.hpp"
#include "sim/result_json.hpp"
#include "sim/scenario.hpp"
#include "sim/sweep/process_pool.hpp"
#include "sim/sweep/progress.hpp"
#include "sim/sweep/results_hdf5.hpp"
#include "sim/sweep/results_table.hpp"
#include "sim/sweep/squeeze_report.hpp"
#include "sim/sweep/sweep_spec.hpp"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

namespace memwall::cli {

namespace fs = std::filesystem;
using sweep::ResultsTable;

namespace {

struct Shard {
  long long index = 1, count = 1; // K-th of M, 1-based
};

Shard parse_shard(const std::string& text) {
  Shard s;
  char slash = 0;
  std::istringstream in(text);
  if (!(in >> s.index >> slash >> s.count) || slash != '/' || s.count < 1 || s.index < 1 || s.index > s.count ||
      !in.eof())
    throw model::InputError("--shard", 0, "", "expected K/M with 1 <= K <= M, got '" + text + "'");
  return s;
}

std::vector<std::string> result_columns(const sweep::SweepSpec& spec) {
  std::vector<std::string> columns{"point", "status", "error"};
  columns.insert(columns.end(), spec.keys.begin(), spec.keys.end());
  for (const auto& k : sim::deterministic_record_keys())
    columns.push_back(k);
  return columns;
}

std::vector<std::string> row_for(const sweep::SweepPoint& p, size_t width, const std::string& error,
                                 const nlohmann::json* record) {
  std::vector<std::string> row{std::to_string(p.index), error.empty() ? "ok" : "error", error};
  for (const auto& [key, value] : p.values)
    row.push_back(value);
  for (const auto& k : sim::deterministic_record_keys())
    row.push_back(record ? record->at(k).dump() : "");
  row.resize(width);
  return row;
}

std::string last_line(const std::string& path) {
  std::ifstream in(path);
  std::string line, last;
  while (std::getline(in, line))
    if (!line.empty())
      last = line;
  return last.rfind("memwall: error: ", 0) == 0 ? last.substr(16) : last;
}

std::string self_executable() {
  std::error_code ec;
  const auto path = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string("memwall") : path.string();
}

} // namespace

int sweep_command(const SweepOptions& options) {
  sweep::SweepSpec spec;
  Shard shard;
  try {
    spec = sweep::load_sweep(options.file);
    shard = parse_shard(options.shard);
    const bool csv = options.out.size() > 4 && options.out.substr(options.out.size() - 4) == ".csv";
    if (!csv && !sweep::is_hdf5_path(options.out))
      throw model::InputError(options.out, 0, "--out", "results go to a .csv or .h5 file");
  } catch (const model::InputError& e) {
    std::cerr << "memwall: error: " << e.what() << "\n";
    return kExitBadInput;
  }
  ResultsTable results(result_columns(spec));
  if (options.resume && fs::exists(options.out)) {
    try {
      ResultsTable previous = sweep::load_results(options.out);
      if (previous.columns() != results.columns())
        throw std::runtime_error(options.out + ": its columns differ from this sweep's; not resuming into it");
      results = previous;
    } catch (const std::exception& e) {
      std::cerr << "memwall: error: " << e.what() << "\n";
      return kExitBadInput;
    }
  }
  // This shard's points that still need a run; invalid points fail here, without a process.
  const auto& catalog = model::GpuCatalog::builtin();
  const fs::path work = fs::temp_directory_path() / ("memwall-sweep-" + std::to_string(::getpid()));
  fs::create_directories(work);
  std::vector<const sweep::SweepPoint*> todo;
  std::vector<sweep::Job> jobs;
  long long skipped = 0, failed = 0;
  const size_t width = results.columns().size();
  for (const auto& p : spec.points) {
    if (p.index % shard.count != shard.index - 1)
      continue;
    if (results.has_ok_row(p.index)) {
      ++skipped;
      continue;
    }
    const std::string label = spec.file + " point " + std::to_string(p.index);
    try {
      sim::parse_scenario(model::InputNode::load_string(p.scenario_yaml, label), catalog);
    } catch (const model::InputError& e) {
      results.set_row(p.index, row_for(p, width, e.what(), nullptr));
      std::cerr << "memwall: point " << p.index << " is invalid: " << e.what() << "\n";
      ++failed;
      continue;
    }
    const std::string base = (work / ("point-" + std::to_string(p.index))).string();
    std::ofstream(base + ".yaml") << p.scenario_yaml;
    todo.push_back(&p);
    jobs.push_back({{self_executable(), "run", "--json", base + ".yaml"}, base + ".out", base + ".err"});
  }
  if (skipped)
    std::cerr << "memwall: resuming: " << skipped << " point(s) already done in " << options.out << "\n";
  sweep::save_results(results, options.out);
  sweep::Progress progress(static_cast<long long>(jobs.size()), ::isatty(STDERR_FILENO) != 0);
  sweep::run_jobs(jobs, options.jobs, [&](const sweep::JobOutcome& o) {
    const sweep::SweepPoint& p = *todo[o.job];
    std::ifstream out(jobs[o.job].stdout_path);
    std::string text((std::istreambuf_iterator<char>(out)), std::istreambuf_iterator<char>());
    std::string error;
    nlohmann::json record;
    if (o.exit_code == 0) {
      try {
        record = nlohmann::json::parse(text);
      } catch (const std::exception& e) {
        error = std::string("unreadable result: ") + e.what();
      }
    } else {
      error = last_line(jobs[o.job].stderr_path);
      if (error.empty())
        error = "worker exited with code " + std::to_string(o.exit_code);
    }
    results.set_row(p.index, row_for(p, width, error, error.empty() ? &record : nullptr));
    sweep::save_results(results, options.out); // after every point, so an interrupted sweep can resume
    failed += error.empty() ? 0 : 1;
    progress.point_done(p.index, error.empty(), error);
  });
  progress.finish();
  fs::remove_all(work);
  std::cerr << "memwall: sweep " << spec.file << ": " << jobs.size() + static_cast<size_t>(skipped) << " point(s)"
            << (shard.count > 1 ? " in shard " + options.shard : "") << ", " << failed << " failed; results in "
            << options.out << "\n";
  if (spec.report.kind == "squeeze")
    sweep::print_squeeze_report(std::cout, results, spec.report.b_crit_tokens);
  return failed ? kExitInternal : kExitOk;
}

int merge_command(const std::string& out, const std::vector<std::string>& inputs) {
  ResultsTable merged;
  try {
    for (size_t i = 0; i < inputs.size(); ++i) {
      ResultsTable t = sweep::load_results(inputs[i]);
      if (i == 0)
        merged = ResultsTable(t.columns());
      else if (t.columns() != merged.columns())
        throw std::runtime_error(inputs[i] + ": columns differ from " + inputs[0] + "'s");
      for (const auto& [point, row] : t.rows())
        if (!merged.has_ok_row(point)) // a successful run of a point wins over a failed one
          merged.set_row(point, row);
    }
  } catch (const std::exception& e) {
    std::cerr << "memwall: error: " << e.what() << "\n";
    return kExitBadInput;
  }
  try {
    sweep::save_results(merged, out);
  } catch (const std::exception& e) {
    std::cerr << "memwall: error: " << e.what() << "\n";
    return kExitInternal;
  }
  std::cerr << "memwall: merged " << merged.rows().size() << " point(s) from " << inputs.size() << " file(s) into "
            << out << "\n";
  return kExitOk;
}

} // namespace memwall::cli
