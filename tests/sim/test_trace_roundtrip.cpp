// HDF5 trace round trip: rows written by the writer read back unchanged through the HDF5 C API,
// with the phase enum named, units attached and no temporary file left.
#include "trace/hdf5_trace_writer.hpp"
#include "trace/trace_buffer.hpp"

#include <catch2/catch.hpp>
#include <hdf5.h>

#include <cstdio>
#include <filesystem>
#include <string>

using namespace memwall::trace;

namespace {

std::string read_string_attribute(hid_t object, const char* name) {
  const hid_t attr = H5Aopen(object, name, H5P_DEFAULT);
  REQUIRE(attr >= 0);
  const hid_t type = H5Aget_type(attr);
  char* text = nullptr;
  REQUIRE(H5Aread(attr, type, &text) >= 0);
  std::string out = text;
  H5free_memory(text);
  H5Tclose(type);
  H5Aclose(attr);
  return out;
}

} // namespace

TEST_CASE("phases, comms and summary survive a write/read round trip") {
  const std::string path = (std::filesystem::temp_directory_path() / "memwall-roundtrip.h5").string();
  std::vector<PhaseRow> phases = {
      {0, 0, 0, 0, TracePhase::FwdGemm, TraceStream::Compute, 0.0, 0.5, 1e12, 2e9, 0.9, 0.12, 30.0, 0.0},
      {0, 0, -1, -1, TracePhase::AllReduce, TraceStream::Compute, 0.5, 1.25, 0, 0, 0, 0, 45.0, 0.25},
      {1, -1, -1, -1, TracePhase::Wait, TraceStream::Compute, 1.0, 1.25, 0, 0, 0, 0, 15.0, 0.0},
  };
  std::vector<CommRow> comms = {{0, 1, 3.5e9, 0.5, 1.2, 0}, {1, 0, 3.5e9, 0.5, 1.2, 0}};
  TraceContents c;
  c.text_attributes = {{"scenario_name", "round trip"}};
  c.summary_numbers = {{"step_time_s", 1.25}};
  c.phases = &phases;
  c.comms = &comms;
  c.links = {{"gpu000000-link_UP", "gpu-switch", 25e9, 3.5e9, 0.7, 0.1}};
  c.per_gpu = {GpuSummaryRow{0, 0.5, 0.75, 0, 0, 1e12, 2e9, 3.5e9, 3.5e9, 0.9, 0.12, 75, 0.25, 76.27}};
  write_hdf5_trace(path, c);
  CHECK_FALSE(std::filesystem::exists(path + ".tmp"));

  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  REQUIRE(file >= 0);
  CHECK(read_string_attribute(file, "scenario_name") == "round trip");

  const hid_t set = H5Dopen2(file, "phases", H5P_DEFAULT);
  REQUIRE(set >= 0);
  const hid_t space = H5Dget_space(set);
  hsize_t rows = 0;
  H5Sget_simple_extent_dims(space, &rows, nullptr);
  REQUIRE(rows == 3);
  const hid_t file_type = H5Dget_type(set);
  const hid_t mem_type = H5Tget_native_type(file_type, H5T_DIR_ASCEND);
  REQUIRE(H5Tget_size(mem_type) == sizeof(PhaseRow));
  std::vector<PhaseRow> back(3);
  REQUIRE(H5Dread(set, mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, back.data()) >= 0);
  for (size_t i = 0; i < 3; ++i) {
    CHECK(back[i].gpu == phases[i].gpu);
    CHECK(back[i].step == phases[i].step);
    CHECK(back[i].microbatch == phases[i].microbatch);
    CHECK(back[i].phase == phases[i].phase);
    CHECK(back[i].t_end_s == phases[i].t_end_s);
    CHECK(back[i].e_static_j == phases[i].e_static_j);
    CHECK(back[i].e_network_j == phases[i].e_network_j);
  }
  // The phase column is an enum whose names are the trace's phase names.
  const int phase_field = H5Tget_member_index(file_type, "phase");
  const hid_t enum_type = H5Tget_member_type(file_type, static_cast<unsigned>(phase_field));
  CHECK(H5Tget_class(enum_type) == H5T_ENUM);
  char name[32];
  const uint8_t wait = static_cast<uint8_t>(TracePhase::Wait);
  REQUIRE(H5Tenum_nameof(enum_type, &wait, name, sizeof name) >= 0);
  CHECK(std::string(name) == "wait");
  CHECK(read_string_attribute(set, "unit_t_start_s") == "s");
  CHECK(read_string_attribute(set, "unit_e_arith_j") == "J");
  // Chunked and compressed.
  const hid_t props = H5Dget_create_plist(set);
  CHECK(H5Pget_layout(props) == H5D_CHUNKED);
  CHECK(H5Pget_nfilters(props) >= 1);
  H5Pclose(props);
  H5Tclose(enum_type);
  H5Tclose(mem_type);
  H5Tclose(file_type);
  H5Sclose(space);
  H5Dclose(set);

  const hid_t summary = H5Gopen2(file, "summary", H5P_DEFAULT);
  REQUIRE(summary >= 0);
  double step_time = 0;
  const hid_t attr = H5Aopen(summary, "step_time_s", H5P_DEFAULT);
  REQUIRE(H5Aread(attr, H5T_NATIVE_DOUBLE, &step_time) >= 0);
  CHECK(step_time == 1.25);
  H5Aclose(attr);
  H5Gclose(summary);
  H5Fclose(file);
  std::remove(path.c_str());
}

TEST_CASE("aggregation: micro-batch level merges a micro-batch's forward phases into one row") {
  TraceBuffer buffer(TraceLevel::Microbatch, 1);
  buffer.add_phase({0, 0, 0, 0, TracePhase::FwdGemm, TraceStream::Compute, 0.0, 1.0, 10, 1, 1, 1, 1, 0});
  buffer.add_phase({0, 0, 0, 0, TracePhase::FwdElementwise, TraceStream::Compute, 1.0, 1.5, 0, 2, 0, 2, 0.5, 0});
  buffer.add_phase({0, 0, 0, 1, TracePhase::FwdGemm, TraceStream::Compute, 1.5, 2.5, 10, 1, 1, 1, 1, 0});
  buffer.add_phase({0, 0, 0, 1, TracePhase::BwdGemm, TraceStream::Compute, 2.5, 4.5, 20, 2, 2, 2, 2, 0});
  buffer.add_phase({0, 0, 1, 0, TracePhase::FwdGemm, TraceStream::Compute, 4.5, 5.5, 10, 1, 1, 1, 1, 0});
  REQUIRE(buffer.phases().size() == 3);
  const PhaseRow& fwd = buffer.phases()[0];
  CHECK(fwd.phase == TracePhase::Forward);
  CHECK(fwd.layer == -1);
  CHECK(fwd.t_start_s == 0.0);
  CHECK(fwd.t_end_s == 2.5);
  CHECK(fwd.flops == 20);
  CHECK(fwd.hbm_bytes == 4);
  CHECK(fwd.e_static_j == 2.5);
  CHECK(buffer.phases()[1].phase == TracePhase::Backward);
  CHECK(buffer.phases()[2].microbatch == 1);
}
