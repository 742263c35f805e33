#include "hdf5_trace_writer.hpp"

#include "sim/output/hdf5_image.hpp"
#include "sim/output/safe_file.hpp"

#include <hdf5.h>

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <stdexcept>

namespace memwall::trace {

namespace {

hid_t check(hid_t id, const char* what) {
  if (id < 0)
    throw std::runtime_error(std::string("HDF5: cannot ") + what);
  return id;
}

void check_status(herr_t status, const char* what) {
  if (status < 0)
    throw std::runtime_error(std::string("HDF5: cannot ") + what);
}

void write_string_attribute(hid_t object, const std::string& name, const std::string& value) {
  const hid_t type = check(H5Tcopy(H5T_C_S1), "copy a string type");
  H5Tset_size(type, H5T_VARIABLE);
  H5Tset_cset(type, H5T_CSET_UTF8);
  const hid_t space = check(H5Screate(H5S_SCALAR), "create a scalar space");
  const hid_t attr = check(H5Acreate2(object, name.c_str(), type, space, H5P_DEFAULT, H5P_DEFAULT), "create an attribute");
  const char* text = value.c_str();
  check_status(H5Awrite(attr, type, &text), "write an attribute");
  H5Aclose(attr);
  H5Sclose(space);
  H5Tclose(type);
}

void write_number_attribute(hid_t object, const std::string& name, double value) {
  const hid_t space = check(H5Screate(H5S_SCALAR), "create a scalar space");
  const hid_t attr =
      check(H5Acreate2(object, name.c_str(), H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, H5P_DEFAULT), "create an attribute");
  check_status(H5Awrite(attr, H5T_NATIVE_DOUBLE, &value), "write an attribute");
  H5Aclose(attr);
  H5Sclose(space);
}

// A compound type under construction, with each column's unit.
class Compound {
public:
  explicit Compound(size_t size) : type_(check(H5Tcreate(H5T_COMPOUND, size), "create a compound type")) {}
  ~Compound() { H5Tclose(type_); }
  Compound(const Compound&) = delete;
  Compound& operator=(const Compound&) = delete;

  Compound& field(const char* name, size_t offset, hid_t type, const char* unit) {
    check_status(H5Tinsert(type_, name, offset, type), "add a compound field");
    units_.emplace_back(name, unit);
    return *this;
  }
  hid_t type() const { return type_; }
  const std::vector<std::pair<std::string, std::string>>& units() const { return units_; }

private:
  hid_t type_;
  std::vector<std::pair<std::string, std::string>> units_;
};

void write_table(hid_t parent, const char* name, const Compound& compound, const void* data, size_t rows,
                 const char* description) {
  const hsize_t dims[1] = {rows};
  const hsize_t max_dims[1] = {H5S_UNLIMITED};
  const hid_t space = check(H5Screate_simple(1, dims, max_dims), "create a dataspace");
  const hid_t props = check(H5Pcreate(H5P_DATASET_CREATE), "create dataset properties");
  const hsize_t chunk[1] = {std::clamp<hsize_t>(rows, 1, 16384)};
  check_status(H5Pset_chunk(props, 1, chunk), "set chunking");
  check_status(H5Pset_shuffle(props), "set shuffle");
  check_status(H5Pset_deflate(props, 4), "set compression");
  const hid_t set = check(H5Dcreate2(parent, name, compound.type(), space, H5P_DEFAULT, props, H5P_DEFAULT),
                          "create a dataset");
  if (rows > 0)
    check_status(H5Dwrite(set, compound.type(), H5S_ALL, H5S_ALL, H5P_DEFAULT, data), "write a dataset");
  write_string_attribute(set, "description", description);
  for (const auto& [field, unit] : compound.units())
    write_string_attribute(set, "unit_" + field, unit);
  H5Dclose(set);
  H5Pclose(props);
  H5Sclose(space);
}

hid_t phase_enum_type() {
  const hid_t type = check(H5Tenum_create(H5T_NATIVE_UINT8), "create the phase enum");
  for (uint8_t v = 0; v < kTracePhases; ++v)
    check_status(H5Tenum_insert(type, trace_phase_name(static_cast<TracePhase>(v)), &v), "name an enum value");
  return type;
}

void write_phases(hid_t file, const std::vector<PhaseRow>& rows) {
  const hid_t phase_type = phase_enum_type();
  Compound c(sizeof(PhaseRow));
  c.field("gpu", offsetof(PhaseRow, gpu), H5T_NATIVE_INT32, "rank")
      .field("step", offsetof(PhaseRow, step), H5T_NATIVE_INT32, "index")
      .field("microbatch", offsetof(PhaseRow, microbatch), H5T_NATIVE_INT32, "index (-1: none)")
      .field("layer", offsetof(PhaseRow, layer), H5T_NATIVE_INT32, "index (-1: none)")
      .field("phase", offsetof(PhaseRow, phase), phase_type, "enum")
      .field("stream", offsetof(PhaseRow, stream), H5T_NATIVE_UINT8, "0 compute (tiles the run), 1 communication (overlapped)")
      .field("t_start_s", offsetof(PhaseRow, t_start_s), H5T_NATIVE_DOUBLE, "s")
      .field("t_end_s", offsetof(PhaseRow, t_end_s), H5T_NATIVE_DOUBLE, "s")
      .field("flops", offsetof(PhaseRow, flops), H5T_NATIVE_DOUBLE, "FLOP")
      .field("hbm_bytes", offsetof(PhaseRow, hbm_bytes), H5T_NATIVE_DOUBLE, "B")
      .field("e_arith_j", offsetof(PhaseRow, e_arith_j), H5T_NATIVE_DOUBLE, "J")
      .field("e_hbm_j", offsetof(PhaseRow, e_hbm_j), H5T_NATIVE_DOUBLE, "J")
      .field("e_static_j", offsetof(PhaseRow, e_static_j), H5T_NATIVE_DOUBLE, "J")
      .field("e_network_j", offsetof(PhaseRow, e_network_j), H5T_NATIVE_DOUBLE, "J")
      .field("clock", offsetof(PhaseRow, clock), H5T_NATIVE_DOUBLE, "fraction of the maximum core clock")
      .field("job", offsetof(PhaseRow, job), H5T_NATIVE_INT32, "index");
  write_table(file, "phases", c, rows.data(), rows.size(), "one row per simulated phase (aggregated per trace level)");
  H5Tclose(phase_type);
}

void write_comms(hid_t file, const std::vector<CommRow>& rows) {
  const hid_t phase_type = phase_enum_type();
  Compound c(sizeof(CommRow));
  c.field("src_gpu", offsetof(CommRow, src_gpu), H5T_NATIVE_INT32, "rank")
      .field("dst_gpu", offsetof(CommRow, dst_gpu), H5T_NATIVE_INT32, "rank")
      .field("bytes", offsetof(CommRow, bytes), H5T_NATIVE_DOUBLE, "B")
      .field("t_start_s", offsetof(CommRow, t_start_s), H5T_NATIVE_DOUBLE, "s")
      .field("t_end_s", offsetof(CommRow, t_end_s), H5T_NATIVE_DOUBLE, "s")
      .field("collective_id", offsetof(CommRow, collective_id), H5T_NATIVE_INT64, "id")
      .field("kind", offsetof(CommRow, kind), phase_type, "enum")
      .field("job", offsetof(CommRow, job), H5T_NATIVE_INT32, "index");
  write_table(file, "comms", c, rows.data(), rows.size(), "one row per simulated message");
  H5Tclose(phase_type);
}

void write_power(hid_t file, const std::vector<PowerRow>& rows) {
  Compound c(sizeof(PowerRow));
  c.field("gpu", offsetof(PowerRow, gpu), H5T_NATIVE_INT32, "rank")
      .field("t_start_s", offsetof(PowerRow, t_start_s), H5T_NATIVE_DOUBLE, "s")
      .field("t_end_s", offsetof(PowerRow, t_end_s), H5T_NATIVE_DOUBLE, "s")
      .field("power_w", offsetof(PowerRow, power_w), H5T_NATIVE_DOUBLE, "W")
      .field("clock", offsetof(PowerRow, clock), H5T_NATIVE_DOUBLE, "fraction of the maximum core clock")
      .field("job", offsetof(PowerRow, job), H5T_NATIVE_INT32, "index");
  write_table(file, "power", c, rows.data(), rows.size(),
              "each GPU's power over time: a compute-stream phase's arithmetic, HBM and static joules over its "
              "duration (network energy is the links')");
}

void write_server_power(hid_t file, const char* name, const std::vector<ServerPowerRow>& rows, bool with_server,
                        const char* description) {
  Compound c(sizeof(ServerPowerRow));
  if (with_server)
    c.field("server", offsetof(ServerPowerRow, server), H5T_NATIVE_INT32, "index");
  c.field("t_start_s", offsetof(ServerPowerRow, t_start_s), H5T_NATIVE_DOUBLE, "s")
      .field("t_end_s", offsetof(ServerPowerRow, t_end_s), H5T_NATIVE_DOUBLE, "s")
      .field("power_w", offsetof(ServerPowerRow, power_w), H5T_NATIVE_DOUBLE, "W")
      .field("job", offsetof(ServerPowerRow, job), H5T_NATIVE_INT32, "index");
  write_table(file, name, c, rows.data(), rows.size(), description);
}

// A fixed-size text type for a compound's column (the caller closes it).
hid_t text_type(size_t bytes) {
  const hid_t type = check(H5Tcopy(H5T_C_S1), "copy a string type");
  H5Tset_size(type, bytes);
  return type;
}

struct LinkRecord { // fixed-size strings for HDF5
  char name[64];
  char kind[32];
  double bandwidth_bytes_per_s, bytes_carried, busy_s, e_network_j;
  int32_t job;
};

void write_links(hid_t file, const std::vector<LinkRow>& rows) {
  std::vector<LinkRecord> records(rows.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    std::snprintf(records[i].name, sizeof records[i].name, "%s", rows[i].name.c_str());
    std::snprintf(records[i].kind, sizeof records[i].kind, "%s", rows[i].kind.c_str());
    records[i].bandwidth_bytes_per_s = rows[i].bandwidth_bytes_per_s;
    records[i].bytes_carried = rows[i].bytes_carried;
    records[i].busy_s = rows[i].busy_s;
    records[i].e_network_j = rows[i].e_network_j;
    records[i].job = rows[i].job;
  }
  const hid_t name_type = text_type(sizeof(LinkRecord::name));
  const hid_t kind_type = text_type(sizeof(LinkRecord::kind));
  Compound c(sizeof(LinkRecord));
  c.field("name", offsetof(LinkRecord, name), name_type, "")
      .field("kind", offsetof(LinkRecord, kind), kind_type, "")
      .field("bandwidth", offsetof(LinkRecord, bandwidth_bytes_per_s), H5T_NATIVE_DOUBLE, "B/s")
      .field("bytes_carried", offsetof(LinkRecord, bytes_carried), H5T_NATIVE_DOUBLE, "B")
      .field("busy_s", offsetof(LinkRecord, busy_s), H5T_NATIVE_DOUBLE, "s")
      .field("e_network_j", offsetof(LinkRecord, e_network_j), H5T_NATIVE_DOUBLE, "J")
      .field("job", offsetof(LinkRecord, job), H5T_NATIVE_INT32, "index");
  write_table(file, "links", c, records.data(), records.size(),
              "one row per link direction that carried traffic (per job whose messages crossed it)");
  H5Tclose(name_type);
  H5Tclose(kind_type);
}

// A whole run's events for one seed: /run/events, and the seed as an attribute of /run.
void write_run(hid_t file, const TraceContents& t) {
  const hid_t group = check(H5Gcreate2(file, "run", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), "create /run");
  const hid_t event_type = text_type(sizeof(RunEventRow::event));
  const hid_t failure_type = text_type(sizeof(RunEventRow::failure));
  Compound c(sizeof(RunEventRow));
  c.field("event", offsetof(RunEventRow, event), event_type, "")
      .field("failure", offsetof(RunEventRow, failure), failure_type, "")
      .field("t_s", offsetof(RunEventRow, t_s), H5T_NATIVE_DOUBLE, "s of wall-clock time from the run's start")
      .field("steps_kept", offsetof(RunEventRow, steps_kept), H5T_NATIVE_DOUBLE, "steps")
      .field("lost_s", offsetof(RunEventRow, lost_s), H5T_NATIVE_DOUBLE, "s");
  write_table(group, "events", c, t.run_events.data(), t.run_events.size(),
              "one row per event of one seed's run: checkpoints started and written, failures (with the training "
              "time they lost), re-routes, restarts done, the end");
  write_number_attribute(group, "seed", t.run_seed);
  H5Tclose(event_type);
  H5Tclose(failure_type);
  H5Gclose(group);
}

void write_summary(hid_t file, const TraceContents& t) {
  const hid_t group = check(H5Gcreate2(file, "summary", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), "create /summary");
  Compound c(sizeof(GpuSummaryRow));
  c.field("gpu", offsetof(GpuSummaryRow, gpu), H5T_NATIVE_INT32, "rank");
  const std::pair<const char*, std::pair<size_t, const char*>> fields[] = {
      {"t_compute_s", {offsetof(GpuSummaryRow, t_compute_s), "s"}},
      {"t_allreduce_s", {offsetof(GpuSummaryRow, t_allreduce_s), "s"}},
      {"t_optimizer_s", {offsetof(GpuSummaryRow, t_optimizer_s), "s"}},
      {"t_wait_s", {offsetof(GpuSummaryRow, t_wait_s), "s"}},
      {"flops", {offsetof(GpuSummaryRow, flops), "FLOP"}},
      {"hbm_bytes", {offsetof(GpuSummaryRow, hbm_bytes), "B"}},
      {"bytes_sent", {offsetof(GpuSummaryRow, bytes_sent), "B"}},
      {"bytes_received", {offsetof(GpuSummaryRow, bytes_received), "B"}},
      {"e_arith_j", {offsetof(GpuSummaryRow, e_arith_j), "J"}},
      {"e_hbm_j", {offsetof(GpuSummaryRow, e_hbm_j), "J"}},
      {"e_static_j", {offsetof(GpuSummaryRow, e_static_j), "J"}},
      {"e_network_j", {offsetof(GpuSummaryRow, e_network_j), "J"}},
      {"e_total_j", {offsetof(GpuSummaryRow, e_total_j), "J"}},
  };
  for (const auto& [name, where] : fields)
    c.field(name, where.first, H5T_NATIVE_DOUBLE, where.second);
  c.field("job", offsetof(GpuSummaryRow, job), H5T_NATIVE_INT32, "index");
  write_table(group, "per_gpu", c, t.per_gpu.data(), t.per_gpu.size(), "per-GPU totals over the whole run");
  for (const auto& [k, v] : t.summary_numbers)
    write_number_attribute(group, k, v);
  for (const auto& [k, v] : t.summary_texts)
    write_string_attribute(group, k, v);
  H5Gclose(group);
}

} // namespace

void write_hdf5_trace(const std::string& path, const TraceContents& t) {
  const hid_t file = output::create_hdf5_in_memory();
  try {
    for (const auto& [k, v] : t.text_attributes)
      write_string_attribute(file, k, v);
    write_phases(file, *t.phases);
    write_comms(file, *t.comms);
    write_links(file, t.links);
    write_power(file, t.power);
    write_server_power(file, "power_servers", t.server_power, true,
                       "each server's power over time: its GPUs' power plus host and NICs, over the power "
                       "supplies' efficiency");
    write_server_power(file, "power_job", t.job_power, false,
                       "the whole job's power over time: every server's, summed");
    if (!t.run_events.empty())
      write_run(file, t);
    write_summary(file, t);
  } catch (...) {
    H5Fclose(file);
    throw;
  }
  output::write_atomically(path, output::close_hdf5_image(file)); // the file is closed either way
}

} // namespace memwall::trace
