// Sweep results as HDF5: group /points with one dataset per column, in column order (attribute
// `columns`). Columns whose every filled cell is a number are float64 (NaN where empty, e.g. the
// metrics of a failed point); the others variable-length UTF-8 strings. Written to a temporary name
// and renamed. Reading gives back the same table (numbers in shortest round-trip form).
#pragma once

#include "results_table.hpp"

#include <string>

namespace memwall::sweep {

void write_results_hdf5(const ResultsTable& table, const std::string& path);
ResultsTable read_results_hdf5(const std::string& path);

// By extension: .h5 / .hdf5 as HDF5, anything else as CSV.
bool is_hdf5_path(const std::string& path);
void save_results(const ResultsTable& table, const std::string& path);
ResultsTable load_results(const std::string& path);

} // namespace memwall::sweep
