#include "input_error.hpp"

namespace memwall::model {

std::string InputError::format(const std::string& file, int line, const std::string& key, const std::string& reason) {
  std::string text = file;
  if (line > 0) {
    text.append(":");
    text.append(std::to_string(line));
  }
  text.append(": ");
  if (!key.empty()) {
    text.append(key);
    text.append(": ");
  }
  text.append(reason);
  return text;
}

} // namespace memwall::model
