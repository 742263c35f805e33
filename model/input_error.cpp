#include "input_error.hpp"

#include <cstdio>

namespace memwall::model {

namespace {

// Length of the UTF-8 sequence starting at text[i] if it is well formed (no overlong form, no
// surrogate, at most U+10FFFF), else 0.
std::size_t utf8_sequence_length(std::string_view text, std::size_t i) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char b0 = byte(i);
  std::size_t n = 0;
  unsigned char low = 0x80, high = 0xBF; // the bounds of the second byte
  if (b0 >= 0xC2 && b0 <= 0xDF)
    n = 2;
  else if (b0 >= 0xE0 && b0 <= 0xEF) {
    n = 3;
    low = b0 == 0xE0 ? 0xA0 : 0x80;
    high = b0 == 0xED ? 0x9F : 0xBF;
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    n = 4;
    low = b0 == 0xF0 ? 0x90 : 0x80;
    high = b0 == 0xF4 ? 0x8F : 0xBF;
  } else
    return 0;
  if (i + n > text.size() || byte(i + 1) < low || byte(i + 1) > high)
    return 0;
  for (std::size_t k = 2; k < n; ++k)
    if (byte(i + k) < 0x80 || byte(i + k) > 0xBF)
      return 0;
  return n;
}

void append_escaped(std::string& out, unsigned char c) {
  switch (c) {
  case '\n':
    out += "\\n";
    return;
  case '\t':
    out += "\\t";
    return;
  case '\r':
    out += "\\r";
    return;
  default: {
    char hex[8];
    std::snprintf(hex, sizeof hex, "\\x%02x", c);
    out += hex;
  }
  }
}

} // namespace

std::string printable(std::string_view text, std::size_t max_chars) {
  std::string out;
  std::size_t shown = 0;
  for (std::size_t i = 0; i < text.size();) {
    if (shown == max_chars) {
      out += "...";
      break;
    }
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      if (c < 0x20 || c == 0x7F)
        append_escaped(out, c);
      else
        out += static_cast<char>(c);
      ++i;
    } else if (const std::size_t n = utf8_sequence_length(text, i); n > 0) {
      // C1 controls (U+0080-U+009F) act on terminals as ESC sequences do.
      if (n == 2 && c == 0xC2 && static_cast<unsigned char>(text[i + 1]) < 0xA0)
        append_escaped(out, static_cast<unsigned char>(text[i + 1]));
      else
        out.append(text.substr(i, n));
      i += n;
    } else {
      append_escaped(out, c);
      ++i;
    }
    ++shown;
  }
  return out;
}

std::size_t first_invalid_utf8(std::string_view text) {
  for (std::size_t i = 0; i < text.size();) {
    if (static_cast<unsigned char>(text[i]) < 0x80)
      ++i;
    else if (const std::size_t n = utf8_sequence_length(text, i); n > 0)
      i += n;
    else
      return i;
  }
  return std::string_view::npos;
}

std::string printable_message(std::string_view message) {
  return printable(message, kMaxMessageChars);
}

std::string quoted(std::string_view value, std::size_t max_chars) {
  std::string out(1, '\'');
  out += printable(value, max_chars);
  out += '\'';
  return out;
}

std::string InputError::format(const std::string& file, int line, const std::string& key, const std::string& reason) {
  // A path or key path is quoted in full up to a bound: a mutant can name a 5,000-character file.
  std::string text = printable(file, 200);
  if (line > 0) {
    text.append(":");
    text.append(std::to_string(line));
  }
  text.append(": ");
  if (!key.empty()) {
    text.append(printable(key, 120));
    text.append(": ");
  }
  text.append(printable_message(reason));
  return text;
}

} // namespace memwall::model
