#include "safe_file.hpp"

#include "model/input_error.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>

namespace memwall::output {

namespace fs = std::filesystem;

namespace {

bool ends_with(const std::string& text, const std::string& tail) {
  return text.size() >= tail.size() && text.compare(text.size() - tail.size(), tail.size(), tail) == 0;
}

// Removes `NAME.PID.tmp` files beside `path` whose process is gone (a writer killed by SIGKILL).
void remove_stale_temporaries(const std::string& path) {
  const fs::path target(path);
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  const std::string prefix = target.filename().string() + ".";
  DIR* d = ::opendir(dir.c_str());
  if (!d)
    return;
  while (const dirent* entry = ::readdir(d)) {
    const std::string name = entry->d_name;
    if (name.size() <= prefix.size() + 4 || name.compare(0, prefix.size(), prefix) != 0 || !ends_with(name, ".tmp"))
      continue;
    const std::string pid_text = name.substr(prefix.size(), name.size() - prefix.size() - 4);
    if (pid_text.empty() || pid_text.find_first_not_of("0123456789") != std::string::npos || pid_text.size() > 9)
      continue;
    const long pid = std::stol(pid_text);
    if (pid != ::getpid() && ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH)
      ::unlink((dir / name).c_str());
  }
  ::closedir(d);
}

} // namespace

void check_output_target(const std::string& path, const std::string& option,
                         const std::vector<std::string>& extensions) {
  auto refuse = [&](const std::string& reason) { throw model::InputError(path, 0, option, reason); };
  if (path.empty())
    refuse("an output path is required");
  if (!extensions.empty()) {
    bool known = false;
    std::string list;
    for (const auto& ext : extensions) {
      known = known || ends_with(path, ext);
      list += (list.empty() ? "" : ", ") + ext;
    }
    if (!known)
      refuse("unknown output extension (expected " + list + ")");
  }
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode))
      refuse("is a directory");
    if (!S_ISREG(st.st_mode))
      refuse("is not a regular file (a device, FIFO or socket): refusing to replace it");
  }
  const fs::path target(path);
  const std::string dir = target.has_parent_path() ? target.parent_path().string() : std::string(".");
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    refuse("its folder " + dir + " does not exist");
  if (::access(dir.c_str(), W_OK) != 0)
    refuse("its folder " + dir + " is not writable");
}

std::string temporary_path(const std::string& path, long pid) { return path + "." + std::to_string(pid) + ".tmp"; }

void write_atomically(const std::string& path, std::string_view bytes) {
  remove_stale_temporaries(path);
  const std::string tmp = temporary_path(path, ::getpid());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0666);
  if (fd < 0)
    throw std::runtime_error(path + ": cannot create " + tmp + ": " + std::strerror(errno));
  size_t done = 0;
  int error = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      error = n < 0 ? errno : ENOSPC;
      break;
    }
    done += static_cast<size_t>(n);
  }
  if (::close(fd) != 0 && error == 0)
    error = errno;
  if (error == 0 && std::rename(tmp.c_str(), path.c_str()) != 0)
    error = errno;
  if (error != 0) {
    ::unlink(tmp.c_str());
    throw std::runtime_error(path + ": cannot write (" + std::strerror(error) + "); the previous file, if any, is left as it was");
  }
}

bool same_file(const std::string& a, const std::string& b) {
  std::error_code ec;
  return fs::equivalent(a, b, ec) && !ec;
}

} // namespace memwall::output
