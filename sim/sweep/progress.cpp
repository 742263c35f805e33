#include "progress.hpp"

#include <cstdio>

namespace memwall::sweep {

Progress::Progress(long long total, bool terminal, std::string what)
    : total_(total), what_(std::move(what)), terminal_(terminal), start_(std::chrono::steady_clock::now()) {}

void Progress::point_done(long long point, bool ok, const std::string& note) {
  ++done_;
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const double eta = done_ ? elapsed / double(done_) * double(total_ - done_) : 0.0;
  if (terminal_) {
    if (!ok) // keep failures on screen above the bar
      std::fprintf(stderr, "\r\033[K  point %lld failed: %s\n", point, note.c_str());
    constexpr int width = 30;
    const int filled = total_ ? static_cast<int>(width * done_ / total_) : width;
    std::fprintf(stderr, "\r\033[K[%.*s%*s] %lld/%lld  elapsed %.0f s  ETA %.0f s", filled,
                 "==============================", width - filled, "", done_, total_, elapsed, eta);
  } else {
    std::fprintf(stderr, "%s: %lld/%lld done, point %lld %s%s%s, elapsed %.1f s, ETA %.1f s\n", what_.c_str(), done_, total_, point,
                 ok ? "ok" : "FAILED", ok ? "" : ": ", ok ? "" : note.c_str(), elapsed, eta);
  }
  std::fflush(stderr);
}

void Progress::finish() {
  if (terminal_)
    std::fprintf(stderr, "\n");
}

} // namespace memwall::sweep
