#include "timeline_writer.hpp"

#include <cstdio>
#include <stdexcept>

namespace memwall::trace {

void write_timeline(const std::string& path, const std::vector<PhaseRow>& phases, const std::vector<CommRow>& comms,
                    long long max_gpus) {
  const std::string tmp = path + ".tmp";
  std::FILE* f = std::fopen(tmp.c_str(), "w");
  if (!f)
    throw std::runtime_error(path + ": cannot create the timeline file");
  long long gpus = 0;
  for (const auto& p : phases)
    gpus = std::max<long long>(gpus, p.gpu + 1);
  gpus = std::min(gpus, max_gpus);
  std::fprintf(f, "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n");
  std::fprintf(f, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":0,\"args\":{\"name\":\"GPUs\"}},\n");
  std::fprintf(f, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":1,\"args\":{\"name\":\"communication\"}}");
  std::fprintf(f, ",\n{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":2,\"args\":{\"name\":\"overlapped collectives\"}}");
  static const char* const suffix[3] = {"", " sends", " collectives"};
  for (long long g = 0; g < gpus; ++g)
    for (int pid = 0; pid < 3; ++pid)
      std::fprintf(f, ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":%lld,\"args\":{\"name\":\"gpu %lld%s\"}}",
                   pid, g, g, suffix[pid]);
  for (const auto& p : phases) {
    if (p.gpu >= gpus)
      continue;
    std::fprintf(f,
                 ",\n{\"name\":\"%s\",\"cat\":\"phase\",\"ph\":\"X\",\"pid\":%d,\"tid\":%d,\"ts\":%.6f,\"dur\":%.6f,"
                 "\"args\":{\"step\":%d,\"microbatch\":%d,\"layer\":%d,\"flops\":%.17g,\"hbm_bytes\":%.17g,"
                 "\"energy_j\":%.17g}}",
                 trace_phase_name(p.phase), p.stream == TraceStream::Communication ? 2 : 0, p.gpu, p.t_start_s * 1e6, (p.t_end_s - p.t_start_s) * 1e6, p.step,
                 p.microbatch, p.layer, p.flops, p.hbm_bytes,
                 p.e_arith_j + p.e_hbm_j + p.e_static_j + p.e_network_j);
  }
  for (const auto& c : comms) {
    if (c.src_gpu >= gpus)
      continue;
    std::fprintf(f,
                 ",\n{\"name\":\"send to gpu %d\",\"cat\":\"comm\",\"ph\":\"X\",\"pid\":1,\"tid\":%d,\"ts\":%.6f,"
                 "\"dur\":%.6f,\"args\":{\"bytes\":%.17g,\"dst_gpu\":%d,\"collective_id\":%lld}}",
                 c.dst_gpu, c.src_gpu, c.t_start_s * 1e6, (c.t_end_s - c.t_start_s) * 1e6, c.bytes, c.dst_gpu,
                 static_cast<long long>(c.collective_id));
  }
  std::fprintf(f, "\n]}\n");
  const bool ok = std::ferror(f) == 0;
  if (std::fclose(f) != 0 || !ok) {
    std::remove(tmp.c_str());
    throw std::runtime_error(path + ": cannot write the timeline");
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    throw std::runtime_error(path + ": cannot rename the finished timeline into place");
  }
}

} // namespace memwall::trace
