// The seed's Tables 1-6, printed from memwall's model in the seed's exact layout.
#pragma once

#include "gpu_catalog.hpp"
#include "traffic.hpp"

#include <ostream>
#include <string>
#include <vector>

namespace memwall::model {

// The seed's worked example (Table 5): one row per regime.
struct WorkedExampleRow {
  std::string label;
  double tokens_per_microbatch;
  long long microbatches;
  long long gpus;
  bool nvlink; // fabric: the GPU's NVLink bandwidth if true, else its IB bandwidth
};
const std::vector<WorkedExampleRow>& worked_example_rows();

// The seed's GPUs, in the seed's order, looked up in the catalog.
std::vector<const GpuSpec*> seed_gpus(const GpuCatalog& catalog);

void print_table_boundaries(std::ostream& out);
void print_table_balances(std::ostream& out, const GpuCatalog& catalog, const TrafficConstants& traffic);
void print_table_t_min(std::ostream& out, const GpuCatalog& catalog, const TrafficConstants& traffic);
void print_table_elementwise_tax(std::ostream& out, const GpuCatalog& catalog, const TrafficConstants& traffic);
void print_table_worked_example(std::ostream& out, const GpuCatalog& catalog, const TrafficConstants& traffic);
void print_table_squeeze(std::ostream& out, const GpuCatalog& catalog, const TrafficConstants& traffic);
void print_seed_tables(std::ostream& out, const GpuCatalog& catalog, const TrafficConstants& traffic);

// snprintf into a std::string (the tables mirror the seed's printf-style formats).
std::string format(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

} // namespace memwall::model
