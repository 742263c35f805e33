// An error in user input (scenario, catalog, fabric file), located by file, line and key, and the one
// sanitiser for every value a message quotes back to the user.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>

namespace memwall::model {

// `text` as one printable line for a message: control characters escaped (\n, \t, \x1b, ...), bytes
// that are not UTF-8 shown as \xNN, and cut after `max_chars` characters with "..." (a value may be
// a whole file read by mistake, or a 5,000-character mutant). Every value a message quotes goes
// through here, so that no input can make a one-line error span lines, ring the bell or recolour
// the terminal.
std::string printable(std::string_view text, std::size_t max_chars = 80);

// A whole message made safe to print: as printable(), with a bound of kMaxMessageChars. The last
// line of defence where a message holds text that did not come through printable() (an exception
// of a library, an operating system's error string).
inline constexpr std::size_t kMaxMessageChars = 1000;
std::string printable_message(std::string_view message);

// The offset of the first byte of `text` that does not belong to a well-formed UTF-8 sequence;
// std::string_view::npos when the whole text is UTF-8.
std::size_t first_invalid_utf8(std::string_view text);

// `value` quoted for a message: 'text', printable and cut as above.
std::string quoted(std::string_view value, std::size_t max_chars = 80);

class InputError : public std::runtime_error {
public:
  InputError(std::string file, int line, std::string key, const std::string& reason)
      : std::runtime_error(format(file, line, key, reason)), file_(std::move(file)), line_(line),
        key_(std::move(key)), reason_(reason) {}

  const std::string& file() const { return file_; }
  int line() const { return line_; }
  const std::string& key() const { return key_; }
  const std::string& reason() const { return reason_; }

private:
  static std::string format(const std::string& file, int line, const std::string& key, const std::string& reason);
  std::string file_;
  int line_;
  std::string key_;
  std::string reason_;
};

} // namespace memwall::model
