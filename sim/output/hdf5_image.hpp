// HDF5 files built in memory (the core driver, no backing store) and handed over as bytes, so that
// they reach the disk through write_atomically's checked writes. A file HDF5 writes itself cannot be
// closed safely once a write failed (a full disk): its close fails, and the library's exit handler
// then closes it again and crashes.
#pragma once

#include <hdf5.h>

#include <string>

namespace memwall::output {

// A new, empty HDF5 file in memory; std::runtime_error if HDF5 refuses.
hid_t create_hdf5_in_memory();

// Closes `file` (made by create_hdf5_in_memory) and returns its bytes; std::runtime_error on failure.
std::string close_hdf5_image(hid_t file);

} // namespace memwall::output
