// The one sanitiser for values quoted in messages, and the checks made on a YAML text before its
// tree is read (duplicate keys, text that is not UTF-8 or holds control characters).
#include "model/input_error.hpp"
#include "model/input_node.hpp"
#include "test_support.hpp"

#include <string>

using namespace memwall;

namespace {
// The message of the InputError that loading `text` throws ("" when it loads).
std::string load_error(const std::string& text) {
  try {
    model::InputNode::load_string(text, "f.yaml");
  } catch (const model::InputError& e) {
    return e.what();
  }
  return "";
}
} // namespace

TEST_CASE("printable: control characters escaped, bytes that are not UTF-8 shown, long values cut") {
  CHECK(model::printable("plain text") == "plain text");
  CHECK(model::printable("two\nlines\tand\r") == "two\\nlines\\tand\\r");
  CHECK(model::printable("\x1b[31mred\x07") == "\\x1b[31mred\\x07");
  CHECK(model::printable("del\x7f") == "del\\x7f");
  CHECK(model::printable("caf\xe9") == "caf\\xe9");                   // Latin-1, not UTF-8
  CHECK(model::printable("caf\xc3\xa9 \xe2\x86\x92") == "caf\xc3\xa9 \xe2\x86\x92"); // UTF-8 kept
  CHECK(model::printable("\xc2\x9b" "1m") == "\\x9b1m");           // a C1 control (CSI) in UTF-8
  CHECK(model::printable("\xed\xa0\x80") == "\\xed\\xa0\\x80");       // a surrogate is not UTF-8
  CHECK(model::printable("\xc0\xaf") == "\\xc0\\xaf");                // an overlong '/' is not either
  CHECK(model::printable(std::string(5000, 'x'), 80) == std::string(80, 'x') + "...");
  CHECK(model::printable(std::string(80, 'x'), 80) == std::string(80, 'x'));
  // A cut never splits a character: 81 two-byte characters cut to 80 of them.
  std::string accents;
  for (int i = 0; i < 81; ++i)
    accents += "\xc3\xa9";
  CHECK(model::printable(accents, 80) == accents.substr(0, 160) + "...");
  CHECK(model::quoted("a\nb") == "'a\\nb'");
  CHECK(model::printable_message(std::string(5000, 'y')).size() == model::kMaxMessageChars + 3);
}

TEST_CASE("an InputError is one printable line of bounded length, whatever its parts") {
  const model::InputError e(std::string(5000, 'p') + ".yaml", 3, "base\n", "cannot use \x1b[2J" + std::string(5000, 'r'));
  const std::string what = e.what();
  CHECK(what.find_first_of("\n\r\x1b\x07") == std::string::npos);
  CHECK(what.size() < 1400); // file 200 + key 120 + reason 1000, each with "...", and separators
  CHECK(what.find(":3: base\\n: cannot use \\x1b[2J") != std::string::npos);
  // The parts stay as given, for callers that re-locate the error.
  CHECK(e.file().size() == 5005);
  CHECK(e.key() == "base\n");
}

TEST_CASE("duplicate keys are refused with both lines, at any depth") {
  CHECK(load_error("a: 1\nb: 2\n") == "");
  CHECK(load_error("model:\n  layers: 2\n  hidden: 8\n  layers: 64\n") ==
        "f.yaml:4: model.layers: duplicate key: also on line 2 (YAML keeps one of them; remove or rename one)");
  CHECK(load_error("a: 1\na: 1\n").rfind("f.yaml:2: a: duplicate key: also on line 1", 0) == 0);
  CHECK(load_error("l:\n  - {x: 1, y: 2, x: 3}\n").rfind("f.yaml:2: l[0].x: duplicate key", 0) == 0);
  // Equal keys in different mappings, and equal values, are no duplicates.
  CHECK(load_error("a: {x: 1}\nb: {x: 1}\nc: [x, x]\n") == "");
  // An alias is read once, not expanded: a billion laughs costs its text's length.
  std::string laughs = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (int i = 1; i < 30; ++i) {
    const std::string me = std::to_string(i), prev = "*a" + std::to_string(i - 1);
    laughs.append("a").append(me).append(": &a").append(me).append(" [");
    laughs.append(prev).append(", ").append(prev).append(", ").append(prev).append("]\n");
  }
  CHECK(load_error(laughs + "a0: 1\n").rfind("f.yaml:31: a0: duplicate key: also on line 1", 0) == 0);
}

TEST_CASE("text that is not UTF-8, or holds control characters, is refused at its key") {
  CHECK(load_error("name: caf\xc3\xa9\n") == "");
  CHECK(load_error("name: \"caf\xe9\"\n").rfind("f.yaml:1: name: the text is not valid UTF-8 (\\xe9, byte 4", 0) == 0);
  CHECK(load_error("m:\n  source: x\xff\n").rfind("f.yaml:2: m.source: the text is not valid UTF-8", 0) == 0);
  CHECK(load_error("k: [a, \"b\\e[31m\"]\n").rfind("f.yaml:1: k[1]: the text holds a control character (\\x1b", 0) == 0);
  CHECK(load_error("name: \"two\\nlines\"\n").rfind("f.yaml:1: name: the text holds a control character (\\n", 0) == 0);
  CHECK(load_error("# caf\xe9\nname: x\n") == "f.yaml:1: the file is not valid UTF-8 (byte \\xe9)");
}
