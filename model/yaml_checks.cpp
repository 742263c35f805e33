#include "yaml_checks.hpp"

#include "input_error.hpp"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/exceptions.h>
#include <yaml-cpp/mark.h>
#include <yaml-cpp/parser.h>

#include <sstream>
#include <unordered_map>
#include <vector>

namespace memwall::model {

namespace {

// One open mapping or list: where the next event goes, and the keys seen so far (with their lines).
struct Frame {
  bool is_map = false;
  bool expecting_key = true;  // maps: the next node is a key
  bool key_is_name = false;   // maps: the current key is a scalar (a name in the key path)
  std::string key;            // maps: the current key
  long long index = -1;       // lists: the current element
  std::unordered_map<std::string, int> key_lines;
};

class Checker : public YAML::EventHandler {
public:
  explicit Checker(const std::string& file) : file_(file) {}

  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& mark, YAML::anchor_t) override { node(mark, nullptr); }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t) override { node(mark, nullptr); }
  void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t, const std::string& value) override {
    node(mark, &value);
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {
    node(mark, nullptr);
    stack_.push_back(Frame{});
  }
  void OnSequenceEnd() override { stack_.pop_back(); }
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {
    node(mark, nullptr);
    Frame f;
    f.is_map = true;
    stack_.push_back(std::move(f));
  }
  void OnMapEnd() override { stack_.pop_back(); }

private:
  // The dotted key path of the node being read, as the loaders name keys (a.b[2].c); the innermost
  // mapping's current key only when a value (not the next key) is being read.
  std::string key_path(bool with_innermost_key) const {
    std::string path;
    for (std::size_t i = 0; i < stack_.size(); ++i) {
      const Frame& f = stack_[i];
      if (f.is_map && f.key_is_name && (i + 1 < stack_.size() || with_innermost_key)) {
        if (!path.empty())
          path += '.';
        path += printable(f.key);
      } else if (!f.is_map && f.index >= 0) {
        path += '[';
        path += std::to_string(f.index);
        path += ']';
      }
    }
    return path;
  }

  // A node starts (a scalar's text in `scalar`, else null): it is a key, a value or an element of
  // the innermost open collection.
  void node(const YAML::Mark& mark, const std::string* scalar) {
    const int line = mark.is_null() ? 0 : mark.line + 1;
    if (stack_.empty()) {
      if (scalar)
        check_utf8(*scalar, line, "");
      return;
    }
    Frame& f = stack_.back();
    if (!f.is_map) {
      ++f.index;
      if (scalar)
        check_utf8(*scalar, line, key_path(true));
      return;
    }
    if (!f.expecting_key) { // a value
      if (scalar)
        check_utf8(*scalar, line, key_path(true));
      f.expecting_key = true;
      return;
    }
    f.expecting_key = false;
    f.key_is_name = scalar != nullptr;
    if (!scalar)
      return; // a list or mapping as a key: the loaders refuse it where they read the map
    f.key = *scalar;
    const std::string parent = key_path(false);
    check_utf8(*scalar, line, parent);
    const auto [seen, inserted] = f.key_lines.emplace(*scalar, line);
    if (!inserted) {
      const std::string path = parent.empty() ? printable(*scalar) : parent + "." + printable(*scalar);
      throw InputError(file_, line, path,
                       "duplicate key: also on line " + std::to_string(seen->second) +
                           " (YAML keeps one of them; remove or rename one)");
    }
  }

  // Every text is free text somewhere (a name, a source, a label): UTF-8 that JSON and HDF5 accept,
  // on one line, without characters that move a terminal's cursor, recolour it or ring its bell.
  void check_utf8(const std::string& text, int line, const std::string& key) const {
    const std::size_t bad = first_invalid_utf8(text);
    if (bad != std::string_view::npos)
      throw InputError(file_, line, key,
                       "the text is not valid UTF-8 (" + printable(text.substr(bad, 1)) + ", byte " +
                           std::to_string(bad + 1) + " of " + quoted(text, 40) + ")");
    for (std::size_t i = 0; i < text.size(); ++i) {
      const auto c = static_cast<unsigned char>(text[i]);
      const bool c1 = c == 0xC2 && i + 1 < text.size() && static_cast<unsigned char>(text[i + 1]) < 0xA0;
      if (c < 0x20 || c == 0x7F || c1)
        throw InputError(file_, line, key,
                         "the text holds a control character (" + printable(text.substr(i, c1 ? 2 : 1)) +
                             " in " + quoted(text, 40) + "); values are one line of printable text");
    }
  }

  const std::string& file_;
  std::vector<Frame> stack_;
};

} // namespace

void check_yaml_text(const std::string& text, const std::string& file_label) {
  try {
    std::istringstream in(text);
    YAML::Parser parser(in);
    Checker checker(file_label);
    parser.HandleNextDocument(checker);
  } catch (const YAML::Exception&) {
    return; // the loader parses again and reports the syntax error with its line
  }
  // Bytes outside any value (a comment) that are not UTF-8: the line is all that can be named.
  const std::size_t bad = first_invalid_utf8(text);
  if (bad != std::string_view::npos) {
    int line = 1;
    for (std::size_t i = 0; i < bad; ++i)
      line += text[i] == '\n';
    throw InputError(file_label, line, "", "the file is not valid UTF-8 (byte " + printable(text.substr(bad, 1)) + ")");
  }
}

} // namespace memwall::model
