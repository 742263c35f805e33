#include "timeline_writer.hpp"

#include "sim/output/safe_file.hpp"

#include <cstdarg>

#include <cstdio>
#include <stdexcept>

namespace memwall::trace {

namespace {

// printf into a growing string.
[[gnu::format(printf, 2, 3)]] void append(std::string* out, const char* format, ...) {
  char buffer[1024];
  va_list args;
  va_start(args, format);
  const int n = std::vsnprintf(buffer, sizeof buffer, format, args);
  va_end(args);
  if (n < 0)
    return;
  if (static_cast<size_t>(n) < sizeof buffer) {
    out->append(buffer, static_cast<size_t>(n));
    return;
  }
  std::string big(static_cast<size_t>(n) + 1, '\0');
  va_start(args, format);
  std::vsnprintf(big.data(), big.size(), format, args);
  va_end(args);
  out->append(big.data(), static_cast<size_t>(n));
}

} // namespace

void write_timeline(const std::string& path, const std::vector<PhaseRow>& phases, const std::vector<CommRow>& comms,
                    long long max_gpus) {
  std::string text; // written whole, atomically, at the end
  auto f = &text;
  long long gpus = 0;
  for (const auto& p : phases)
    gpus = std::max<long long>(gpus, p.gpu + 1);
  gpus = std::min(gpus, max_gpus);
  append(f, "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n");
  append(f, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":0,\"args\":{\"name\":\"GPUs\"}},\n");
  append(f, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":1,\"args\":{\"name\":\"communication\"}}");
  append(f, ",\n{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":2,\"args\":{\"name\":\"overlapped collectives\"}}");
  static const char* const suffix[3] = {"", " sends", " collectives"};
  for (long long g = 0; g < gpus; ++g)
    for (int pid = 0; pid < 3; ++pid)
      append(f, ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":%lld,\"args\":{\"name\":\"gpu %lld%s\"}}",
                   pid, g, g, suffix[pid]);
  for (const auto& p : phases) {
    if (p.gpu >= gpus)
      continue;
    append(f,
                 ",\n{\"name\":\"%s\",\"cat\":\"phase\",\"ph\":\"X\",\"pid\":%d,\"tid\":%d,\"ts\":%.6f,\"dur\":%.6f,"
                 "\"args\":{\"step\":%d,\"microbatch\":%d,\"layer\":%d,\"flops\":%.17g,\"hbm_bytes\":%.17g,"
                 "\"energy_j\":%.17g}}",
                 trace_phase_name(p.phase), p.stream == TraceStream::Communication ? 2 : 0, p.gpu, p.t_start_s * 1e6, (p.t_end_s - p.t_start_s) * 1e6, p.step,
                 p.microbatch, p.layer, p.flops, p.hbm_bytes,
                 p.e_arith_j + p.e_hbm_j + p.e_static_j + p.e_network_j);
  }
  // Power as counter tracks (one per GPU shown): its value from each compute phase's start, back to
  // the static floor where the GPU idles until the run ends.
  append(f, ",\n{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":3,\"args\":{\"name\":\"power (W)\"}}");
  for (const auto& p : power_rows(phases)) {
    if (p.gpu >= gpus)
      continue;
    append(f, ",\n{\"name\":\"gpu %d power\",\"cat\":\"power\",\"ph\":\"C\",\"pid\":3,\"ts\":%.6f,"
              "\"args\":{\"W\":%.6g}}",
           p.gpu, p.t_start_s * 1e6, p.power_w);
  }
  for (const auto& c : comms) {
    if (c.src_gpu >= gpus)
      continue;
    append(f,
                 ",\n{\"name\":\"send to gpu %d\",\"cat\":\"comm\",\"ph\":\"X\",\"pid\":1,\"tid\":%d,\"ts\":%.6f,"
                 "\"dur\":%.6f,\"args\":{\"bytes\":%.17g,\"dst_gpu\":%d,\"collective_id\":%lld}}",
                 c.dst_gpu, c.src_gpu, c.t_start_s * 1e6, (c.t_end_s - c.t_start_s) * 1e6, c.bytes, c.dst_gpu,
                 static_cast<long long>(c.collective_id));
  }
  append(f, "\n]}\n");
  output::write_atomically(path, text);
}

} // namespace memwall::trace
