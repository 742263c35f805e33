#include "timeline_writer.hpp"

#include "sim/output/safe_file.hpp"

#include <algorithm>
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

// A name as JSON string content: quotes and backslashes escaped, control characters dropped.
std::string json_text(const std::string& name) {
  std::string out;
  for (const char ch : name) {
    if (ch == '"' || ch == '\\')
      out += '\\';
    if (static_cast<unsigned char>(ch) >= 0x20)
      out += ch;
  }
  return out;
}

} // namespace

void write_timeline(const std::string& path, const std::vector<PhaseRow>& phases, const std::vector<CommRow>& comms,
                    long long max_gpus, const std::vector<std::string>& job_names) {
  std::string text; // written whole, atomically, at the end
  auto f = &text;
  // Per job: its GPUs shown, and its four processes' ids from 4 x job (one job: 0-3, as before).
  const size_t jobs = std::max<size_t>(1, job_names.size());
  std::vector<long long> gpus(jobs, 0);
  for (const auto& p : phases)
    gpus.at(size_t(p.job)) = std::max<long long>(gpus[size_t(p.job)], p.gpu + 1);
  for (long long& g : gpus)
    g = std::min(g, max_gpus);
  auto shown = [&](int32_t job, int32_t gpu) { return gpu < gpus.at(size_t(job)); };
  auto pid = [](int32_t job, int k) { return 4 * int(job) + k; };
  append(f, "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n");
  static const char* const process[4] = {"GPUs", "communication", "overlapped collectives", "power (W)"};
  static const char* const suffix[3] = {"", " sends", " collectives"};
  for (size_t j = 0; j < jobs; ++j) {
    const std::string prefix = job_names.empty() ? "" : json_text(job_names[j]) + ": ";
    for (int k = 0; k < 4; ++k)
      append(f, "%s{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%d,\"args\":{\"name\":\"%s%s\"}}",
             j == 0 && k == 0 ? "" : ",\n", pid(int32_t(j), k), prefix.c_str(), process[k]);
    for (long long g = 0; g < gpus[j]; ++g)
      for (int k = 0; k < 3; ++k)
        append(f, ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":%lld,\"args\":{\"name\":\"gpu %lld%s\"}}",
               pid(int32_t(j), k), g, g, suffix[k]);
  }
  for (const auto& p : phases) {
    if (!shown(p.job, p.gpu))
      continue;
    append(f,
           ",\n{\"name\":\"%s\",\"cat\":\"phase\",\"ph\":\"X\",\"pid\":%d,\"tid\":%d,\"ts\":%.6f,\"dur\":%.6f,"
           "\"args\":{\"step\":%d,\"microbatch\":%d,\"layer\":%d,\"flops\":%.17g,\"hbm_bytes\":%.17g,"
           "\"energy_j\":%.17g}}",
           trace_phase_name(p.phase), pid(p.job, p.stream == TraceStream::Communication ? 2 : 0), p.gpu,
           p.t_start_s * 1e6, (p.t_end_s - p.t_start_s) * 1e6, p.step, p.microbatch, p.layer, p.flops, p.hbm_bytes,
           p.e_arith_j + p.e_hbm_j + p.e_static_j + p.e_network_j);
  }
  // Power as counter tracks (one per GPU shown): its value from each compute phase's start, back to
  // the static floor where the GPU idles until the run ends.
  for (const auto& p : power_rows(phases)) {
    if (!shown(p.job, p.gpu))
      continue;
    append(f, ",\n{\"name\":\"gpu %d power\",\"cat\":\"power\",\"ph\":\"C\",\"pid\":%d,\"ts\":%.6f,"
              "\"args\":{\"W\":%.6g}}",
           p.gpu, pid(p.job, 3), p.t_start_s * 1e6, p.power_w);
  }
  for (const auto& c : comms) {
    if (!shown(c.job, c.src_gpu))
      continue;
    append(f,
           ",\n{\"name\":\"send to gpu %d\",\"cat\":\"comm\",\"ph\":\"X\",\"pid\":%d,\"tid\":%d,\"ts\":%.6f,"
           "\"dur\":%.6f,\"args\":{\"bytes\":%.17g,\"dst_gpu\":%d,\"collective_id\":%lld}}",
           c.dst_gpu, pid(c.job, 1), c.src_gpu, c.t_start_s * 1e6, (c.t_end_s - c.t_start_s) * 1e6, c.bytes,
           c.dst_gpu, static_cast<long long>(c.collective_id));
  }
  append(f, "\n]}\n");
  output::write_atomically(path, text);
}

} // namespace memwall::trace
