#include "results_table.hpp"

#include "sim/output/safe_file.hpp"

#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace memwall::sweep {

namespace {

std::string quote(const std::string& field) {
  if (field.find_first_of(",\"\n") == std::string::npos)
    return field;
  std::string out = "\"";
  for (char c : field)
    out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

// Splits one CSV record (RFC 4180 quoting; records hold no newlines here).
std::vector<std::string> split(const std::string& line) {
  std::vector<std::string> fields;
  std::string field;
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        field += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      fields.push_back(field);
      field.clear();
    } else {
      field += c;
    }
  }
  fields.push_back(field);
  return fields;
}

} // namespace

ResultsTable ResultsTable::read_csv(const std::string& path) {
  std::ifstream in(path);
  if (!in)
    throw std::runtime_error(path + ": cannot open");
  std::string line;
  if (!std::getline(in, line))
    throw std::runtime_error(path + ": empty results file");
  ResultsTable table(split(line));
  if (table.columns_.empty() || table.columns_[0] != "point")
    throw std::runtime_error(path + ": not a memwall sweep results file (first column must be 'point')");
  int number = 1;
  while (std::getline(in, line)) {
    ++number;
    if (line.empty())
      continue;
    auto row = split(line);
    if (row.size() != table.columns_.size())
      throw std::runtime_error(path + ":" + std::to_string(number) + ": " + std::to_string(row.size()) +
                               " fields, expected " + std::to_string(table.columns_.size()));
    const long long point = std::stoll(row[0]);
    table.set_row(point, std::move(row));
  }
  return table;
}

void ResultsTable::write_csv(const std::string& path) const {
  std::string text;
  auto write_row = [&](const std::vector<std::string>& row) {
    for (size_t i = 0; i < row.size(); ++i) {
      if (i)
        text += ',';
      text += quote(row[i]);
    }
    text += "\n";
  };
  write_row(columns_);
  for (const auto& [point, row] : rows_)
    write_row(row);
  output::write_atomically(path, text);
}

void ResultsTable::set_row(long long point, std::vector<std::string> row) { rows_[point] = std::move(row); }

std::string ResultsTable::cell(long long point, const std::string& column) const {
  for (size_t i = 0; i < columns_.size(); ++i)
    if (columns_[i] == column)
      return rows_.at(point).at(i);
  throw std::out_of_range("no column '" + column + "'");
}

bool ResultsTable::has_ok_row(long long point) const { return rows_.count(point) && cell(point, "status") == "ok"; }

} // namespace memwall::sweep
