// Output files that are either complete or absent. Every result file memwall writes (sweep results,
// traces, timelines) goes through here: checked before any work starts (check_output_target), then
// written whole to a temporary name beside the target, every write and the close checked, and
// renamed into place. A failed write (a full disk) leaves the previous file, or none, and throws.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace memwall::output {

// InputError (exit 2) unless `path` can take a result: its extension is one of `extensions` (".csv",
// ".h5", ...; empty: any), its folder exists and is writable, and it is not a directory, a device, a
// FIFO or a socket (writing there as root would replace a device node, or block). `option` names the
// command-line option in the message.
void check_output_target(const std::string& path, const std::string& option,
                         const std::vector<std::string>& extensions = {});

// The temporary name a writer of `path` uses in process `pid` (stale ones of dead processes are
// removed by the next write of the same path).
std::string temporary_path(const std::string& path, long pid);

// Writes `bytes` to `path` atomically (temporary file + rename). std::runtime_error on any failure,
// after removing the temporary file.
void write_atomically(const std::string& path, std::string_view bytes);

// Whether `a` and `b` name the same existing file (hard links and symlinks included).
bool same_file(const std::string& a, const std::string& b);

} // namespace memwall::output
