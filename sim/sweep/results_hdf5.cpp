#include "results_hdf5.hpp"

#include "sim/output/hdf5_image.hpp"
#include "sim/output/safe_file.hpp"

#include <hdf5.h>

#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>
#include <stdexcept>

namespace memwall::sweep {

namespace {

bool parse_number(const std::string& text, double* value) {
  if (text.empty())
    return false;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *value);
  return ec == std::errc() && end == text.data() + text.size();
}

std::string shortest(double v) {
  char buffer[64];
  auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, v);
  return ec == std::errc() ? std::string(buffer, end) : std::to_string(v);
}

hid_t string_type() {
  const hid_t t = H5Tcopy(H5T_C_S1);
  H5Tset_size(t, H5T_VARIABLE);
  H5Tset_cset(t, H5T_CSET_UTF8);
  return t;
}

void fail_if(bool bad, const std::string& what) {
  if (bad)
    throw std::runtime_error(what);
}

} // namespace

bool is_hdf5_path(const std::string& path) {
  auto ends = [&](const char* ext) {
    const std::string e(ext);
    return path.size() > e.size() && path.compare(path.size() - e.size(), e.size(), e) == 0;
  };
  return ends(".h5") || ends(".hdf5");
}

void write_results_hdf5(const ResultsTable& table, const std::string& path) {
  const hid_t file = output::create_hdf5_in_memory();
  const hid_t group = H5Gcreate2(file, "points", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  const hsize_t rows = table.rows().size();
  const hid_t space = H5Screate_simple(1, &rows, nullptr);
  const hid_t str = string_type();
  bool ok = group >= 0 && space >= 0;
  for (size_t c = 0; ok && c < table.columns().size(); ++c) {
    bool numeric = true, filled = false;
    std::vector<double> numbers;
    std::vector<const char*> texts;
    for (const auto& [point, row] : table.rows()) {
      double v = std::numeric_limits<double>::quiet_NaN();
      numeric = numeric && (row[c].empty() || parse_number(row[c], &v));
      filled = filled || !row[c].empty();
      numbers.push_back(v);
      texts.push_back(row[c].c_str());
    }
    numeric = numeric && filled; // an all-empty column (no errors) stays text
    const hid_t type = numeric ? H5T_NATIVE_DOUBLE : str;
    const hid_t set = H5Dcreate2(group, table.columns()[c].c_str(), type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    ok = set >= 0 && (rows == 0 || H5Dwrite(set, type, H5S_ALL, H5S_ALL, H5P_DEFAULT,
                                            numeric ? static_cast<const void*>(numbers.data())
                                                    : static_cast<const void*>(texts.data())) >= 0);
    if (set >= 0)
      H5Dclose(set);
  }
  if (ok) { // the column order, as one attribute
    std::vector<const char*> names;
    for (const auto& c : table.columns())
      names.push_back(c.c_str());
    const hsize_t n = names.size();
    const hid_t name_space = H5Screate_simple(1, &n, nullptr);
    const hid_t attr = H5Acreate2(group, "columns", str, name_space, H5P_DEFAULT, H5P_DEFAULT);
    ok = attr >= 0 && H5Awrite(attr, str, names.data()) >= 0;
    H5Aclose(attr);
    H5Sclose(name_space);
  }
  H5Tclose(str);
  H5Sclose(space);
  H5Gclose(group);
  if (!ok) {
    H5Fclose(file);
    throw std::runtime_error(path + ": cannot assemble the results");
  }
  output::write_atomically(path, output::close_hdf5_image(file));
}

ResultsTable read_results_hdf5(const std::string& path) {
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  fail_if(file < 0, path + ": cannot open as HDF5");
  const hid_t group = H5Gopen2(file, "points", H5P_DEFAULT);
  const hid_t attr = group >= 0 ? H5Aopen(group, "columns", H5P_DEFAULT) : -1;
  if (attr < 0) {
    H5Gclose(group);
    H5Fclose(file);
    throw std::runtime_error(path + ": not a memwall sweep results file (no /points columns)");
  }
  const hid_t str = string_type();
  const hid_t attr_space = H5Aget_space(attr);
  hsize_t n = 0;
  H5Sget_simple_extent_dims(attr_space, &n, nullptr);
  std::vector<char*> names(n);
  H5Aread(attr, str, names.data());
  std::vector<std::string> columns(names.begin(), names.end());
  H5Dvlen_reclaim(str, attr_space, H5P_DEFAULT, names.data());
  H5Sclose(attr_space);
  H5Aclose(attr);
  std::vector<std::vector<std::string>> cells(columns.size());
  hsize_t rows = 0;
  for (size_t c = 0; c < columns.size(); ++c) {
    const hid_t set = H5Dopen2(group, columns[c].c_str(), H5P_DEFAULT);
    fail_if(set < 0, path + ": column " + columns[c] + " missing");
    const hid_t space = H5Dget_space(set);
    H5Sget_simple_extent_dims(space, &rows, nullptr);
    const hid_t type = H5Dget_type(set);
    if (H5Tget_class(type) == H5T_FLOAT) {
      std::vector<double> v(rows);
      if (rows)
        H5Dread(set, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data());
      for (double x : v)
        cells[c].push_back(std::isnan(x) ? "" : shortest(x));
    } else {
      std::vector<char*> v(rows);
      if (rows)
        H5Dread(set, str, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data());
      for (char* s : v)
        cells[c].push_back(s ? s : "");
      if (rows)
        H5Dvlen_reclaim(str, space, H5P_DEFAULT, v.data());
    }
    H5Tclose(type);
    H5Sclose(space);
    H5Dclose(set);
  }
  H5Tclose(str);
  H5Gclose(group);
  H5Fclose(file);
  ResultsTable table(columns);
  for (hsize_t r = 0; r < rows; ++r) {
    std::vector<std::string> row;
    for (auto& column : cells)
      row.push_back(column[r]);
    const long long point = std::stoll(row.at(0));
    table.set_row(point, std::move(row));
  }
  return table;
}

void save_results(const ResultsTable& table, const std::string& path) {
  if (is_hdf5_path(path))
    write_results_hdf5(table, path);
  else
    table.write_csv(path);
}

ResultsTable load_results(const std::string& path) {
  return is_hdf5_path(path) ? read_results_hdf5(path) : ResultsTable::read_csv(path);
}

} // namespace memwall::sweep
