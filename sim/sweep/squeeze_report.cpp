#include "squeeze_report.hpp"

#include "model/batch_squeeze.hpp"
#include "model/seed_table_layout.hpp"

#include <string>

namespace memwall::sweep {

void print_squeeze_report(std::ostream& out, const ResultsTable& results, double b_crit_tokens) {
  out << "\n" << model::table6_title() << "\n";
  bool has_label = false, has_fabric = false; // a sweep need not vary the fabric
  for (const auto& c : results.columns()) {
    has_label = has_label || c == "_fabric";
    has_fabric = has_fabric || c == "cluster.fabric";
  }
  for (const auto& [point, row] : results.rows()) {
    if (results.cell(point, "status") != "ok")
      continue;
    auto number = [&](const char* column) { return std::stod(results.cell(point, column)); };
    // The fixed time converted to tokens at the rate the GPU achieves on the model's weight GEMMs
    // (peak x GEMM efficiency), not at its peak: with a calibrated GPU the peak overstated the tokens
    // the step could have computed meanwhile about 1 / efficiency times. The seed's GPUs run at
    // efficiency 1: Table 6 unchanged.
    model::GpuSpec gpu;
    gpu.peak_flops_per_s = number("gpu_peak_flops_per_s") * number("gemm_efficiency");
    const long long n = std::stoll(results.cell(point, "gpus"));
    const double t_fixed = number("t_allreduce_s") + number("t_optimizer_s"); // measured by the simulation
    const model::SqueezePoint p = model::squeeze_from_fixed_time(t_fixed, gpu, number("params"), n, b_crit_tokens);
    std::string label = has_label    ? results.cell(point, "_fabric")
                        : has_fabric ? results.cell(point, "cluster.fabric")
                                     : std::string("(scenario's)");
    if (label.size() >= 2 && label.front() == '"' && label.back() == '"')
      label = label.substr(1, label.size() - 2);
    out << model::table6_row(label, n, p) << "\n";
  }
}

} // namespace memwall::sweep
