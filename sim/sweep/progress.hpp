// Sweep progress: a bar redrawn in place on a terminal, plain lines otherwise (logs, CI).
#pragma once

#include <chrono>
#include <string>

namespace memwall::sweep {

class Progress {
public:
  Progress(long long total, bool terminal, std::string what = "sweep");
  void point_done(long long point, bool ok, const std::string& note);
  void finish();

private:
  long long total_;
  std::string what_;
  long long done_ = 0;
  bool terminal_;
  std::chrono::steady_clock::time_point start_;
};

} // namespace memwall::sweep
