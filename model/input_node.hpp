// A YAML node that knows its file and dotted key path, so every validation error can name
// file, line and key. Used by the GPU catalog, scenario and fabric loaders.
#pragma once

#include "input_error.hpp"
#include "units.hpp"

#include <yaml-cpp/yaml.h>

#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace memwall::model {

class InputNode {
public:
  InputNode(YAML::Node node, std::string file, std::string key_path);

  // Parses a whole file; a syntax error becomes an InputError with the parser's line.
  static InputNode load_file(const std::string& path);
  static std::string read_text_file(const std::string& path); // InputError when unreadable
  static InputNode load_string(const std::string& text, const std::string& file_label);

  const std::string& file() const { return file_; }
  const std::string& key_path() const { return key_path_; }
  int line() const; // 1-based; 0 when unknown
  const YAML::Node& yaml() const { return node_; }

  bool is_map() const { return node_.IsMap(); }
  bool is_sequence() const { return node_.IsSequence(); }
  bool is_scalar() const { return node_.IsScalar(); }
  bool has(const std::string& key) const;

  [[noreturn]] void fail(const std::string& reason) const;

  void require_map() const;
  // Rejects keys not in `allowed`, naming the first unknown key and its line.
  void check_keys(std::initializer_list<std::string_view> allowed) const;
  void check_keys(const std::vector<std::string_view>& allowed) const;
  InputNode child(const std::string& key) const; // required
  std::optional<InputNode> optional_child(const std::string& key) const;
  std::vector<InputNode> elements() const;                        // sequence items
  std::vector<std::pair<std::string, InputNode>> entries() const; // map items, in file order

  std::string as_string() const;
  double as_number() const;              // any finite number
  double as_positive_number() const;     // > 0
  double as_non_negative_number() const; // >= 0
  double as_fraction() const;            // in (0, 1]
  long long as_positive_integer() const; // >= 1
  long long as_non_negative_integer() const;
  // >= 1 and <= `limit` (a documented input limit, named in the message with `what`).
  long long as_count(long long limit, const char* what) const;
  bool as_bool() const;
  // The text, which must be one of `choices` ("expected a, b or c, got 'x'" otherwise).
  std::string as_one_of(std::initializer_list<std::string_view> choices) const;
  double as_quantity(Dimension dimension) const; // with unit, any sign checked by callers below
  double as_positive_quantity(Dimension dimension) const;
  double as_non_negative_quantity(Dimension dimension) const;

  static constexpr long long kMaxInputFileBytes = 16 << 20; // scenario, fabric, sweep and catalog files

private:
  std::string describe_value() const;
  std::string key_text(const YAML::Node& key) const; // InputError unless the key is a plain name
  YAML::Node node_;
  std::string file_;
  std::string key_path_;
};

} // namespace memwall::model
