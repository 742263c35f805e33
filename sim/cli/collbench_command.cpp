// `memwall collbench`: simulated nccl-tests (sim/collbench). A fabric (catalog name or file) with
// flags, or a collbench file (scenarios/validation-nccl/*.yaml: the case and the published
// measurement it reproduces, printed beside the simulated row).
#include "commands.hpp"

#include "collbench/collbench.hpp"
#include "collectives/channels.hpp"
#include "model/input_error.hpp"
#include "model/input_node.hpp"
#include "model/units.hpp"
#include "sim/output/safe_file.hpp"
#include "sim/scenario/scenario.hpp"
#include "topologies/fabric_loader.hpp"

#include <nlohmann/json.hpp>

#include <yaml-cpp/yaml.h>

#include <cmath>
#include <filesystem>
#include <cstdio>
#include <iostream>
#include <optional>
#include <sstream>

namespace memwall::cli {

namespace {

using collbench::CollbenchSpec;

constexpr const char* kCommand = "memwall collbench";

// A published figure a collbench file reproduces: at one size, a bus bandwidth or a time.
struct Measured {
  double size_bytes = 0;
  double busbw_bytes_per_s = 0; // 0: a time instead
  double time_s = 0;
};

struct CollbenchCase {
  CollbenchSpec spec;
  std::string name, source;
  std::vector<Measured> measured;
};

double parse_size(const std::string& text, const std::string& file, int line, const std::string& key) {
  std::string error;
  const auto bytes = model::parse_quantity(text, model::Dimension::Bytes, &error);
  if (!bytes)
    throw model::InputError(file, line, key, error);
  if (*bytes < 1 || *bytes > collbench::kMaxSizeBytes)
    throw model::InputError(file, line, key,
                            "a size from 1 B to 64 GiB, got " + model::quoted(text));
  return *bytes;
}

// "8B:8GiB" (every size from one to the other, x factor each time) or "8B,1MiB,8GiB".
std::vector<double> parse_sizes(const std::string& text, double factor, const std::string& file, int line,
                                const std::string& key) {
  std::vector<double> sizes;
  if (const size_t colon = text.find(':'); colon != std::string::npos) {
    const double from = parse_size(text.substr(0, colon), file, line, key);
    const double to = parse_size(text.substr(colon + 1), file, line, key);
    if (to < from)
      throw model::InputError(file, line, key, "an empty range: " + model::quoted(text) + " ends below its start");
    sizes = collbench::size_range(from, to, factor);
  } else {
    std::stringstream list(text);
    for (std::string item; std::getline(list, item, ',');)
      sizes.push_back(parse_size(item, file, line, key));
  }
  if (sizes.empty())
    throw model::InputError(file, line, key, "no size given");
  constexpr size_t kMaxSizes = 200;
  if (sizes.size() > kMaxSizes)
    throw model::InputError(file, line, key, "at most " + std::to_string(kMaxSizes) + " sizes per run");
  return sizes;
}

void check_channels(long long channels, const std::string& file, int line, const std::string& key) {
  if (channels < 0 || channels > collectives::kMaxChannels)
    throw model::InputError(file, line, key,
                            "channels from 1 to " + std::to_string(collectives::kMaxChannels) + ", got " +
                                std::to_string(channels));
}

CollbenchCase load_case(const model::InputNode& root) {
  root.check_keys({"name", "source", "description", "collbench", "measured"});
  CollbenchCase c;
  if (auto n = root.optional_child("name"))
    c.name = n->as_string();
  const model::InputNode bench = root.child("collbench");
  bench.check_keys({"fabric", "gpus", "op", "algorithm", "protocol", "channels", "sizes"});
  c.spec.fabric = topologies::parse_fabric(bench.child("fabric"));
  c.spec.fabric_label = bench.child("fabric").is_scalar() ? bench.child("fabric").as_string() : c.spec.fabric.name;
  c.spec.gpus = bench.child("gpus").as_count(sim::kMaxGpus, "GPUs");
  const model::InputNode op = bench.child("op");
  try {
    c.spec.op = collbench::parse_op(op.as_string());
  } catch (const std::invalid_argument& e) {
    op.fail(e.what());
  }
  if (auto a = bench.optional_child("algorithm"))
    c.spec.algorithm = a->as_one_of({"ring", "hierarchical", "tree", "halving-doubling", "nvls", "p2p", "auto"});
  if (auto p = bench.optional_child("protocol"))
    c.spec.protocol = p->as_one_of({"simple", "ll128", "ll", "auto"});
  if (auto ch = bench.optional_child("channels"))
    c.spec.channels = ch->as_count(collectives::kMaxChannels, "channels");
  const model::InputNode sizes = bench.child("sizes");
  c.spec.sizes_bytes = parse_sizes(sizes.as_string(), 2.0, sizes.file(), sizes.line(), sizes.key_path());
  if (auto m = root.optional_child("measured")) {
    for (const model::InputNode& row : m->elements()) {
      row.check_keys({"size", "busbw", "time", "note"});
      Measured r;
      r.size_bytes = row.child("size").as_positive_quantity(model::Dimension::Bytes);
      const bool has_bw = row.has("busbw"), has_time = row.has("time");
      if (has_bw == has_time)
        row.fail("a measured row gives busbw or time (one of them)");
      if (has_bw)
        r.busbw_bytes_per_s = row.child("busbw").as_positive_quantity(model::Dimension::Bandwidth);
      else
        r.time_s = row.child("time").as_positive_quantity(model::Dimension::Time);
      bool simulated = false;
      for (double s : c.spec.sizes_bytes)
        simulated = simulated || std::abs(s - r.size_bytes) <= 1e-9 * s;
      if (!simulated)
        row.child("size").fail("a measured size that collbench.sizes does not simulate");
      c.measured.push_back(r);
    }
  }
  if (auto s = root.optional_child("source"))
    c.source = s->as_string();
  return c;
}

void print_table(const CollbenchSpec& spec, const collbench::CollbenchResult& r) {
  std::printf("# memwall collbench: %s on %lld GPUs of %s (%lld channel%s for rings)\n", collbench::op_name(spec.op),
              spec.gpus, spec.fabric_label.c_str(), r.channels, r.channels == 1 ? "" : "s");
  std::printf("# %14s %12s %6s %11s %12s %12s  %-16s %s\n", "size(B)", "count", "type", "time(us)", "algbw(GB/s)",
              "busbw(GB/s)", "algorithm", "protocol");
  for (const auto& row : r.rows)
    std::printf("  %14.0f %12lld %6s %11.2f %12.2f %12.2f  %-16s %s\n", row.size_bytes, row.count, "float",
                row.time_s * 1e6, row.algbw_bytes_per_s / 1e9, row.busbw_bytes_per_s / 1e9, row.algorithm.c_str(),
                row.protocol.c_str());
  std::printf("# simulated in %.2f s\n", r.sim_wall_s);
}

nlohmann::json to_json(const CollbenchCase& c, const collbench::CollbenchResult& r) {
  nlohmann::json out{{"op", collbench::op_name(c.spec.op)}, {"gpus", c.spec.gpus},
                     {"fabric", c.spec.fabric_label},    {"channels", r.channels},
                     {"bytes_sent", r.bytes_sent},       {"bytes_received", r.bytes_received},
                     {"sim_wall_s", r.sim_wall_s},       {"rows", nlohmann::json::array()}};
  if (!c.name.empty())
    out["name"] = c.name;
  for (const auto& row : r.rows)
    out["rows"].push_back({{"size_bytes", row.size_bytes},
                           {"count", row.count},
                           {"time_us", row.time_s * 1e6},
                           {"algbw_gb_per_s", row.algbw_bytes_per_s / 1e9},
                           {"busbw_gb_per_s", row.busbw_bytes_per_s / 1e9},
                           {"algorithm", row.algorithm},
                           {"protocol", row.protocol},
                           {"estimate_us", row.estimate_s * 1e6}});
  if (!c.measured.empty()) {
    out["source"] = c.source;
    out["measured"] = nlohmann::json::array();
    for (const Measured& m : c.measured) {
      const collbench::CollbenchRow* sim = nullptr;
      for (const auto& row : r.rows)
        if (std::abs(row.size_bytes - m.size_bytes) <= 1e-9 * m.size_bytes)
          sim = &row;
      nlohmann::json j{{"size_bytes", m.size_bytes}};
      if (m.busbw_bytes_per_s > 0) {
        j["busbw_gb_per_s"] = m.busbw_bytes_per_s / 1e9;
        j["simulated_busbw_gb_per_s"] = sim->busbw_bytes_per_s / 1e9;
        j["error"] = sim->busbw_bytes_per_s / m.busbw_bytes_per_s - 1;
      } else {
        j["time_us"] = m.time_s * 1e6;
        j["simulated_time_us"] = sim->time_s * 1e6;
        j["error"] = sim->time_s / m.time_s - 1;
      }
      out["measured"].push_back(j);
    }
  }
  return out;
}

std::string to_csv(const CollbenchSpec& spec, const collbench::CollbenchResult& r) {
  std::ostringstream out;
  out << "op,gpus,fabric,channels,size_bytes,count,type,time_us,algbw_gb_per_s,busbw_gb_per_s,algorithm,protocol\n";
  out.precision(12);
  for (const auto& row : r.rows)
    out << collbench::op_name(spec.op) << ',' << spec.gpus << ",\"" << spec.fabric_label << "\"," << r.channels << ','
        << row.size_bytes << ',' << row.count << ",float," << row.time_s * 1e6 << ','
        << row.algbw_bytes_per_s / 1e9 << ',' << row.busbw_bytes_per_s / 1e9 << ',' << row.algorithm << ','
        << row.protocol << '\n';
  return out.str();
}

} // namespace

int collbench_command(const CollbenchOptions& o) {
  CollbenchCase c;
  // A file (a collbench case or a fabric), else the name of a catalog fabric.
  std::error_code ec;
  const bool is_file = std::filesystem::is_regular_file(o.target, ec);
  YAML::Node named;
  named["fabric"] = o.target;
  const model::InputNode root =
      is_file ? model::InputNode::load_file(o.target) : model::InputNode(named, kCommand, "");
  if (root.is_map() && root.has("collbench")) { // a collbench file: its case, flags may not change it
    if (o.gpus > 0 || !o.op.empty() || !o.sizes.empty() || o.algorithm != "auto" || o.protocol != "auto" ||
        o.channels != 0)
      throw model::InputError(o.target, 0, "", "a collbench file sets its own case: run it without case flags");
    c = load_case(root);
  } else {
    c.spec.fabric = is_file ? topologies::load_fabric_file(o.target) : topologies::parse_fabric(root.child("fabric"));
    c.spec.fabric_label = c.spec.fabric.name.empty() ? o.target : c.spec.fabric.name;
    if (o.gpus <= 0)
      throw model::InputError(kCommand, 0, "--gpus", "how many GPUs the collective spans (--gpus N)");
    c.spec.gpus = o.gpus;
    try {
      c.spec.op = collbench::parse_op(o.op.empty() ? "all_reduce" : o.op);
    } catch (const std::invalid_argument& e) {
      throw model::InputError(kCommand, 0, "--op", e.what());
    }
    c.spec.algorithm = o.algorithm;
    c.spec.protocol = o.protocol;
    check_channels(o.channels, kCommand, 0, "--channels");
    c.spec.channels = o.channels;
    if (!(o.factor > 1 && o.factor <= 1024))
      throw model::InputError(kCommand, 0, "--factor", "a factor above 1 and at most 1024");
    c.spec.sizes_bytes = parse_sizes(o.sizes.empty() ? "8B:8GiB" : o.sizes, o.factor, kCommand, 0, "--sizes");
  }
  if (!o.out.empty())
    output::check_output_target(o.out, "--out", {".csv"});
  collbench::CollbenchResult result;
  try {
    result = collbench::run_collbench(c.spec);
  } catch (const std::invalid_argument& e) {
    throw model::InputError(o.target, 0, "", e.what());
  }
  if (o.json)
    std::cout << to_json(c, result).dump(2) << "\n";
  else
    print_table(c.spec, result);
  if (!o.out.empty()) {
    output::write_atomically(o.out, to_csv(c.spec, result));
    std::fprintf(stderr, "memwall: wrote %s\n", o.out.c_str());
  }
  return kExitOk;
}

} // namespace memwall::cli
