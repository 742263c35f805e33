// The `memwall` subcommands. Each returns the process exit code: 0 success, 2 bad input, 1 internal error.
#pragma once

#include <string>
#include <vector>

namespace memwall::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitInternal = 1;
inline constexpr int kExitBadInput = 2;

struct RunOptions {
  std::vector<std::string> paths;
  bool json = false;
};

int run_command(const RunOptions& options);
int validate_command(const std::vector<std::string>& paths);
int tables_command();
int gpus_command();

// Where the shipped scenarios live (fixed at build time).
std::string default_scenario_path();

} // namespace memwall::cli
