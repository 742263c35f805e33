#include "seed_tables.hpp"

#include "batch_squeeze.hpp"
#include "input_error.hpp"
#include "layer_cost.hpp"
#include "step_closed_form.hpp"
#include "seed_table_layout.hpp"

#include <cmath>
#include <cstdarg>
#include <cstdio>

namespace memwall::model {

std::string format(const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  char buffer[512];
  std::vsnprintf(buffer, sizeof buffer, fmt, args);
  va_end(args);
  return buffer;
}

namespace {

constexpr double kAddEquivalentJ = 8e-15; // one int8 add = 8 fJ (Dally 2023): the unit of Table 1

struct BoundaryCost {
  const char* item;
  double joules_per_byte;
  const char* note;
};

// Table 1's estimates, as the seed gives them (Dally 2023 and the seed's report).
const BoundaryCost kBoundaryCosts[] = {
    {"int8 add (datapath)", 8e-15, "1 fJ/bit (Dally 2023)"},
    {"BF16 FLOP, datapath only", 0.10e-12, "HMMA-class MAC, 45nm->7nm scaled"},
    {"BF16 FLOP, all-in on A100", 0.90e-12, "(400 W - 60 W static - 40 W HBM)/312 TFLOP/s"},
    {"1 byte moved 1 mm", 8 * 100e-15, "100 fJ/bit-mm"},
    {"1 byte across a 16 mm die", 8 * 1.6e-12, "= 1600 int8 adds (Dally's slide)"},
    {"1 byte from register file", 0.3e-12, "~40 fJ/bit incl. local wire"},
    {"1 byte from SMEM/L1 (192 KB)", 1.0e-12, "50 fJ/bit array + ~0.5 mm round trip"},
    {"1 byte from L2 (40 MB)", 12e-12, "~0.5 pJ/bit array + ~10-20 mm round trip"},
    {"1 byte from HBM2e (interface)", 40e-12, "5 pJ/bit access (Dally 2023)"},
    {"1 byte from HBM2e (all-in)", 60e-12, "+ ~25 mm on-die round trip"},
    {"1 byte from HBM2e (far corner)", 78e-12, "+ 48 mm round trip (Dally's 28 mm die)"},
};

const GpuSpec& lookup(const GpuCatalog& catalog, const std::string& name) {
  const GpuSpec* g = catalog.find(name);
  if (!g)
    throw InputError(GpuCatalog::default_path(), 0, "gpus",
                     "the seed's GPU '" + name + "' is not in the catalog (have: " + catalog.names() + ")");
  return *g;
}

} // namespace

const std::vector<WorkedExampleRow>& worked_example_rows() {
  static const std::vector<WorkedExampleRow> rows = {
      {"online, 1 token/step, 1 GPU", 1, 1, 1, false},
      {"1 sequence (2048 tok)/step, 1 GPU", 2048, 1, 1, false},
      {"1 seq/GPU, 8 GPUs NVLink (DP)", 2048, 1, 8, true},
      {"1 seq/GPU, 64 GPUs over IB (DP)", 2048, 1, 64, false},
      {"8 seq/GPU (grad-accum), 64 GPUs IB", 2048, 8, 64, false},
      {"64 seq/GPU (grad-accum), 64 GPUs IB", 2048, 64, 64, false},
  };
  return rows;
}

std::vector<const GpuSpec*> seed_gpus(const GpuCatalog& catalog) {
  std::vector<const GpuSpec*> out;
  for (const char* name : {"A100-80GB", "A100-40GB", "H100-SXM", "B200"})
    out.push_back(&lookup(catalog, name));
  return out;
}

void print_table_boundaries(std::ostream& out) {
  out << "\n== Table 1: cost of a byte at each boundary (A100-class, 7 nm; estimates, see report) ==\n";
  out << format("%-34s %8s %10s note\n", "item", "pJ", "int8-adds");
  for (const auto& row : kBoundaryCosts)
    out << format("%-34s %8.3f %10.0f %s\n", row.item, row.joules_per_byte * 1e12,
                  row.joules_per_byte / kAddEquivalentJ, row.note);
}

void print_table_balances(std::ostream& out, const GpuCatalog& catalog, const TrafficConstants& traffic) {
  out << "\n== Table 2: machine balances at HBM ==\n";
  out << format("%-16s %9s %8s %13s %13s %6s %18s\n", "GPU", "peak TF/s", "HBM TB/s", "beta_t FLOP/B",
                "beta_E FLOP/B", "d_min", "T_min(inf d)=2beta");
  for (const GpuSpec* g : seed_gpus(catalog)) {
    const double bt = machine_balance_flops_per_byte(*g);
    out << format("%-16s %9.0f %8.2f %13.0f %13.0f %6.0f %18.0f\n", g->display_name.c_str(),
                  g->peak_flops_per_s / 1e12, g->hbm_bytes_per_s / 1e12, bt, energy_balance_flops_per_byte(*g),
                  d_min_hidden(*g, traffic), traffic.b_w_bytes_per_param * bt / 6.0);
  }
}

void print_table_t_min(std::ostream& out, const GpuCatalog& catalog, const TrafficConstants& traffic) {
  out << "\n== Table 3: micro-batch tokens per weight visit needed for HBM intensity >= balance ==\n";
  const auto gpus = seed_gpus(catalog);
  out << format("%6s", "d");
  for (const GpuSpec* g : gpus)
    out << format(" %16s", g->display_name.c_str());
  out << "\n";
  for (long long d : {512, 768, 1024, 2048, 4096, 8192, 12288}) {
    out << format("%6lld", d);
    for (const GpuSpec* g : gpus) {
      const double v = t_min_tokens(d, *g, traffic);
      out << (std::isfinite(v) ? format(" %16.0f", v) : format(" %16s", "never"));
    }
    out << "\n";
  }
}

void print_table_elementwise_tax(std::ostream& out, const GpuCatalog& catalog, const TrafficConstants& traffic) {
  out << "\n== Table 4: element-wise (memory-bound) share of step time, a*beta/(72 d), "
         "and HBM energy floor a*e_B/(72 d e_F) ==\n";
  for (const char* name : {"A100-80GB", "H100-SXM"}) {
    const GpuSpec& g = lookup(catalog, name);
    out << g.display_name << "\n";
    for (long long d : {768, 1024, 2048, 4096, 12288})
      out << format("  d=%6lld: element-wise time / GEMM time = %5.2f   "
                    "HBM-activation energy / arithmetic energy = %5.2f%%\n",
                    d, elementwise_time_share(d, g, traffic), 100.0 * activation_energy_floor(d, g, traffic));
  }
}

void print_table_worked_example(std::ostream& out, const GpuCatalog& catalog, const TrafficConstants& traffic) {
  out << "\n== Table 5: 7B-class model (d=4096, L=32, s=2048) on A100-80GB: per-token cost by regime ==\n";
  const GpuSpec& g = lookup(catalog, "A100-80GB");
  const TransformerShape shape{4096, 32, 2048, 50000};
  const double params = total_params(shape);
  out << format("  params ~ %.2f B; saved activations per 2048-token sequence (34 d s L) = %.1f GB;"
                " Adam mixed-precision state (16 B/param) = %.0f GB\n",
                params / 1e9,
                traffic.a_store_bytes_per_token_per_d * double(shape.hidden * shape.seq_len * shape.layers) / 1e9,
                kAdamStateBytesPerParam * params / 1e9);
  out << table5_header() << "\n";
  for (const auto& row : worked_example_rows()) {
    StepPlan plan{g, shape, traffic, row.tokens_per_microbatch, row.microbatches, row.gpus,
                  row.nvlink ? g.nvlink_bytes_per_s : g.ib_bytes_per_s};
    out << table5_row(row.label, step_closed_form(plan)) << "\n";
  }
}

void print_table_squeeze(std::ostream& out, const GpuCatalog& catalog, const TrafficConstants& traffic) {
  out << "\n" << table6_title() << "\n";
  const GpuSpec& g = lookup(catalog, "A100-80GB");
  const double params = layer_params(TransformerShape{4096, 32, 0, 0}); // the seed leaves embeddings out here
  const double b_crit_tokens = 1e6;
  struct Fabric {
    double bytes_per_s;
    std::string label;
  };
  const Fabric fabrics[] = {{g.nvlink_bytes_per_s, format("NVLink %.0f GB/s", g.nvlink_bytes_per_s / 1e9)},
                            {g.ib_bytes_per_s, format("IB HDR %.0f GB/s", g.ib_bytes_per_s / 1e9)}};
  for (const Fabric& fab : fabrics) {
    for (long long n : {8, 64, 256, 1024}) {
      const double t_fixed = closed_form_fixed_time_s(g, params, n, fab.bytes_per_s, traffic);
      const SqueezePoint p = squeeze_from_fixed_time(t_fixed, g, params, n, b_crit_tokens);
      out << table6_row(fab.label, n, p) << "\n";
    }
  }
}

void print_seed_tables(std::ostream& out, const GpuCatalog& catalog, const TrafficConstants& traffic) {
  print_table_boundaries(out);
  print_table_balances(out, catalog, traffic);
  print_table_t_min(out, catalog, traffic);
  print_table_elementwise_tax(out, catalog, traffic);
  print_table_worked_example(out, catalog, traffic);
  print_table_squeeze(out, catalog, traffic);
}

} // namespace memwall::model
