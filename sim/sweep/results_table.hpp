// Sweep results: one row per point (point index, status, error, swept keys, metrics), kept sorted by
// point. CSV on disk, written to a temporary name and renamed, so a reader never sees half a file.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace memwall::sweep {

class ResultsTable {
public:
  explicit ResultsTable(std::vector<std::string> columns = {}) : columns_(std::move(columns)) {}

  static ResultsTable read_csv(const std::string& path); // std::runtime_error on a malformed file
  void write_csv(const std::string& path) const;

  const std::vector<std::string>& columns() const { return columns_; }
  const std::map<long long, std::vector<std::string>>& rows() const { return rows_; }
  void set_row(long long point, std::vector<std::string> row); // row[0] must be the point index
  bool has_ok_row(long long point) const;
  std::string cell(long long point, const std::string& column) const;

private:
  std::vector<std::string> columns_;
  std::map<long long, std::vector<std::string>> rows_;
};

} // namespace memwall::sweep
