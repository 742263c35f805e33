#include "input_node.hpp"

#include "yaml_checks.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include <charconv>
#include <cmath>
#include <fstream>
#include <sstream>

namespace memwall::model {

namespace {

std::pair<double, double> sane_range(Dimension dimension) {
  switch (dimension) {
  case Dimension::Bandwidth:
    return {1e3, 1e16}; // bytes/s: 1 kB/s to 10 PB/s
  case Dimension::Time:
    return {1e-12, 1e10}; // s: 1 ps to ~300 years (a device's mean time between failures)
  case Dimension::Bytes:
    return {1.0, 1e18};
  case Dimension::FlopRate:
    return {1e6, 1e19};
  case Dimension::Flops:
    return {1.0, 1e25};
  case Dimension::Energy:
    return {1e-18, 1e6}; // J (per FLOP, byte or bit: 1 aJ upwards)
  case Dimension::Power:
    return {1e-3, 1e7}; // W
  }
  return {0, 1e300};
}

std::string format_si(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", v);
  return text;
}

} // namespace

InputNode::InputNode(YAML::Node node, std::string file, std::string key_path)
    : node_(std::move(node)), file_(std::move(file)), key_path_(std::move(key_path)) {}

std::string InputNode::read_text_file(const std::string& path) {
  // Only regular files of a sane size: /dev/zero or a FIFO would read forever or block.
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    throw InputError(path, 0, "", std::string("cannot open file: ") + std::strerror(errno));
  if (S_ISDIR(st.st_mode))
    throw InputError(path, 0, "", "is a directory, not a file");
  if (!S_ISREG(st.st_mode))
    throw InputError(path, 0, "", "is not a regular file (a device, FIFO or socket)");
  if (st.st_size > kMaxInputFileBytes)
    throw InputError(path, 0, "", "is " + std::to_string(st.st_size) + " bytes; input files are limited to " +
                                      std::to_string(kMaxInputFileBytes) + " bytes");
  std::ifstream in(path);
  if (!in)
    throw InputError(path, 0, "", "cannot open file");
  std::stringstream text;
  text << in.rdbuf();
  if (text.str().find('\0') != std::string::npos)
    throw InputError(path, 0, "", "is not a text file (it holds NUL bytes)");
  return text.str();
}

InputNode InputNode::load_file(const std::string& path) {
  return load_string(read_text_file(path), path);
}

InputNode InputNode::load_string(const std::string& text, const std::string& file_label) {
  check_yaml_text(text, file_label); // duplicate keys and text that is not UTF-8
  try {
    YAML::Node root = YAML::Load(text);
    if (!root.IsDefined() || root.IsNull())
      throw InputError(file_label, 1, "", "the file is empty");
    return InputNode(root, file_label, "");
  } catch (const YAML::ParserException& e) {
    throw InputError(file_label, e.mark.line + 1, "", "YAML syntax error: " + e.msg);
  } catch (const YAML::Exception& e) { // e.g. aliases nested past the parser's depth limit
    throw InputError(file_label, e.mark.line + 1, "", "YAML error: " + e.msg);
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
    const std::string key = key_text(item.first);
    bool known = false;
    for (auto a : allowed)
      known = known || key == a;
    if (!known) {
      std::string list;
      for (auto a : allowed)
        list += (list.empty() ? "" : ", ") + std::string(a);
      // The key as one short printable line: a mangled file can make a key of many lines.
      const std::string shown = printable(key, 80);
      const std::string path = key_path_.empty() ? shown : key_path_ + "." + shown;
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
    if (key_text(item.first) == key) {
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
    const std::string key = key_text(item.first);
    out.emplace_back(key, InputNode(item.second, file_, key_path_.empty() ? key : key_path_ + "." + key));
  }
  return out;
}

std::string InputNode::key_text(const YAML::Node& key) const {
  if (!key.IsScalar())
    throw InputError(file_, key.Mark().line + 1, key_path_,
                     std::string("a key must be a name, not ") + (key.IsMap() ? "a mapping" : key.IsSequence() ? "a list" : "nothing"));
  return key.Scalar();
}

std::string InputNode::describe_value() const {
  if (node_.IsMap())
    return "a mapping";
  if (node_.IsSequence())
    return "a list";
  if (node_.IsNull())
    return "nothing";
  if (key_path_.empty()) // a whole file that parsed as one text: its contents are never echoed
    return "a whole file of text, not a mapping of keys (its contents are not shown)";
  return quoted(node_.Scalar());
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

long long InputNode::as_count(long long limit, const char* what) const {
  const long long v = as_positive_integer();
  if (v > limit)
    fail(std::to_string(v) + " is over the limit of " + std::to_string(limit) + " " + what +
         " (see docs/reference.md, Input limits)");
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
  // Physical quantities in a range a machine can have: a 5e-324 s latency or an infinite bandwidth
  // would pass here and abort the simulator later.
  const auto [lowest, highest] = sane_range(dimension);
  if (*value != 0.0 && (std::fabs(*value) < lowest || std::fabs(*value) > highest))
    fail(describe_value() + " is outside the sane range for this quantity (" + format_si(lowest) + " to " +
         format_si(highest) + " in SI units, or 0)");
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
  fail("expected " + list + ", got " + quoted(text));
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
