// An error in user input (scenario, catalog, fabric file), located by file, line and key.
#pragma once

#include <stdexcept>
#include <string>

namespace memwall::model {

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
