#include "hdf5_image.hpp"

#include <stdexcept>

namespace memwall::output {

hid_t create_hdf5_in_memory() {
  static long counter = 0; // names only tell open in-memory files apart
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr); // errors become exceptions, not stack dumps
  const hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  if (fapl < 0 || H5Pset_fapl_core(fapl, 1 << 20, 0) < 0)
    throw std::runtime_error("HDF5: cannot set up an in-memory file");
  const std::string name = "memwall-in-memory-" + std::to_string(++counter) + ".h5";
  const hid_t file = H5Fcreate(name.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
  H5Pclose(fapl);
  if (file < 0)
    throw std::runtime_error("HDF5: cannot create an in-memory file");
  return file;
}

std::string close_hdf5_image(hid_t file) {
  std::string bytes;
  bool ok = H5Fflush(file, H5F_SCOPE_GLOBAL) >= 0;
  const ssize_t size = ok ? H5Fget_file_image(file, nullptr, 0) : -1;
  if (size > 0) {
    bytes.resize(static_cast<size_t>(size));
    ok = H5Fget_file_image(file, bytes.data(), bytes.size()) == size;
  } else {
    ok = false;
  }
  ok = H5Fclose(file) >= 0 && ok;
  if (!ok)
    throw std::runtime_error("HDF5: cannot assemble the file in memory");
  return bytes;
}

} // namespace memwall::output
