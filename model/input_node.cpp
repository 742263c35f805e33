#include "input_node.hpp"

#include <charconv>
#include <cmath>
#include <fstream>
#include <sstream>

namespace memwall::model {

InputNode::InputNode(YAML::Node node, std::string file, std::string key_path)
    : node_(std::move(node)), file_(std::move(file)), key_path_(std::move(key_path)) {}

std::string InputNode::read_text_file(const std::string& path) {
  std::ifstream in(path);
  if (!in)
    throw InputError(path, 0, "", "cannot open file");
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

InputNode InputNode::load_file(const std::string& path) {
  return load_string(read_text_file(path), path);
}

InputNode InputNode::load_string(const std::string& text, const std::string& file_label) {
  try {
    YAML::Node root = YAML::Load(text);
    if (!root.IsDefined() || root.IsNull())
      throw InputError(file_label, 1, "", "the file is empty");
    return InputNode(root, file_label, "");
  } catch (const YAML::ParserException& e) {
    throw InputError(file_label, e.mark.line + 1, "", "YAML syntax error: " + e.msg);
  }
}

int InputNode::line() const {
  const YAML::Mark mark = node_.Mark();
  return mark.is_null() ? 0 : mark.line + 1;
}

bool InputNode::has(const std::string& key) const {
  return node_.IsMap() && node_[key].IsDefined();
}

void InputNode::fail(const std::string& reason) const {
  throw InputError(file_, line(), key_path_, reason);
}

void InputNode::require_map() const {
  if (!node_.IsMap())
    fail("expected a mapping of keys, got " + describe_value());
}

void InputNode::check_keys(std::initializer_list<std::string_view> allowed) const {
  check_keys(std::vector<std::string_view>(allowed));
}

void InputNode::check_keys(const std::vector<std::string_view>& allowed) const {
  require_map();
  for (const auto& item : node_) {
    const std::string key = item.first.as<std::string>();
    bool known = false;
    for (auto a : allowed)
      known = known || key == a;
    if (!known) {
      std::string list;
      for (auto a : allowed)
        list += (list.empty() ? "" : ", ") + std::string(a);
      const std::string path = key_path_.empty() ? key : key_path_ + "." + key;
      throw InputError(file_, item.first.Mark().line + 1, path, "unknown key (allowed here: " + list + ")");
    }
  }
}

InputNode InputNode::child(const std::string& key) const {
  auto c = optional_child(key);
  if (!c)
    fail("missing required key '" + key + "'");
  return *c;
}

std::optional<InputNode> InputNode::optional_child(const std::string& key) const {
  require_map();
  for (const auto& item : node_) {
    if (item.first.as<std::string>() == key) {
      const std::string path = key_path_.empty() ? key : key_path_ + "." + key;
      YAML::Node value = item.second;
      if (value.IsNull())
        throw InputError(file_, item.first.Mark().line + 1, path, "has no value");
      return InputNode(value, file_, path);
    }
  }
  return std::nullopt;
}

std::vector<InputNode> InputNode::elements() const {
  if (!node_.IsSequence())
    fail("expected a list, got " + describe_value());
  std::vector<InputNode> out;
  for (size_t i = 0; i < node_.size(); ++i)
    out.emplace_back(node_[i], file_, key_path_ + "[" + std::to_string(i) + "]");
  return out;
}

std::vector<std::pair<std::string, InputNode>> InputNode::entries() const {
  require_map();
  std::vector<std::pair<std::string, InputNode>> out;
  for (const auto& item : node_) {
    const std::string key = item.first.as<std::string>();
    out.emplace_back(key, InputNode(item.second, file_, key_path_.empty() ? key : key_path_ + "." + key));
  }
  return out;
}

std::string InputNode::describe_value() const {
  if (node_.IsMap())
    return "a mapping";
  if (node_.IsSequence())
    return "a list";
  if (node_.IsNull())
    return "nothing";
  return "'" + node_.Scalar() + "'";
}

std::string InputNode::as_string() const {
  if (!node_.IsScalar())
    fail("expected a text value, got " + describe_value());
  return node_.Scalar();
}

double InputNode::as_number() const {
  if (!node_.IsScalar())
    fail("expected a number, got " + describe_value());
  const std::string& text = node_.Scalar();
  double value = 0.0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(value))
    fail("expected a number, got " + describe_value());
  return value;
}

double InputNode::as_positive_number() const {
  const double v = as_number();
  if (v <= 0.0)
    fail("must be positive, got " + describe_value());
  return v;
}

double InputNode::as_non_negative_number() const {
  const double v = as_number();
  if (v < 0.0)
    fail("must not be negative, got " + describe_value());
  return v;
}

long long InputNode::as_non_negative_integer() const {
  const double v = as_number();
  if (v != std::floor(v) || std::fabs(v) > 9.0e15)
    fail("expected a whole number, got " + describe_value());
  if (v < 0)
    fail("must not be negative, got " + describe_value());
  return static_cast<long long>(v);
}

long long InputNode::as_positive_integer() const {
  const long long v = as_non_negative_integer();
  if (v < 1)
    fail("must be at least 1, got " + describe_value());
  return v;
}

bool InputNode::as_bool() const {
  const std::string text = as_string();
  if (text == "true" || text == "yes" || text == "on")
    return true;
  if (text == "false" || text == "no" || text == "off")
    return false;
  fail("expected true or false, got " + describe_value());
}

double InputNode::as_quantity(Dimension dimension) const {
  if (!node_.IsScalar())
    fail("expected a quantity (e.g. " + dimension_examples(dimension) + "), got " + describe_value());
  std::string error;
  auto value = parse_quantity(node_.Scalar(), dimension, &error);
  if (!value)
    fail(error);
  return *value;
}

double InputNode::as_fraction() const {
  const double v = as_positive_number();
  if (v > 1)
    fail("must be a fraction in (0, 1], got " + describe_value());
  return v;
}

std::string InputNode::as_one_of(std::initializer_list<std::string_view> choices) const {
  const std::string text = as_string();
  std::string list;
  size_t i = 0;
  for (auto c : choices) {
    if (text == c)
      return text;
    list.append(i == 0 ? "" : i + 1 == choices.size() ? " or " : ", ").append(c);
    ++i;
  }
  fail("expected " + list + ", got '" + text + "'");
}

double InputNode::as_positive_quantity(Dimension dimension) const {
  const double v = as_quantity(dimension);
  if (v <= 0.0)
    fail("must be positive, got " + describe_value());
  return v;
}

double InputNode::as_non_negative_quantity(Dimension dimension) const {
  const double v = as_quantity(dimension);
  if (v < 0.0)
    fail("must not be negative, got " + describe_value());
  return v;
}

} // namespace memwall::model
