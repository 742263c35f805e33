#include "units.hpp"

#include "input_error.hpp"

#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <utility>

namespace memwall::model {
namespace {

struct UnitFactor {
  std::string_view suffix;
  double factor;
};

// Decimal prefixes, as vendors quote bandwidth and capacity; binary ones for capacities too.
constexpr std::array<UnitFactor, 6> decimal_prefixes{
    {{"", 1.0}, {"k", 1e3}, {"K", 1e3}, {"M", 1e6}, {"G", 1e9}, {"T", 1e12}}};

std::optional<double> factor_for(std::string_view unit, Dimension dimension) {
  auto with_prefixes = [&](std::string_view base, double base_factor) -> std::optional<double> {
    if (unit.size() < base.size() || unit.substr(unit.size() - base.size()) != base)
      return std::nullopt;
    std::string_view prefix = unit.substr(0, unit.size() - base.size());
    for (const auto& p : decimal_prefixes)
      if (prefix == p.suffix)
        return base_factor * p.factor;
    if (prefix == "P")
      return base_factor * 1e15;
    return std::nullopt;
  };
  switch (dimension) {
  case Dimension::Bandwidth:
    if (auto f = with_prefixes("B/s", 1.0))
      return f;
    return with_prefixes("b/s", 0.125);
  case Dimension::Bytes: {
    constexpr std::array<UnitFactor, 4> binary{
        {{"KiB", 1024.0}, {"MiB", 1048576.0}, {"GiB", 1073741824.0}, {"TiB", 1099511627776.0}}};
    for (const auto& b : binary)
      if (unit == b.suffix)
        return b.factor;
    return with_prefixes("B", 1.0);
  }
  case Dimension::FlopRate:
    return with_prefixes("FLOP/s", 1.0);
  case Dimension::Flops:
    return with_prefixes("FLOP", 1.0);
  case Dimension::Time: {
    constexpr std::array<UnitFactor, 7> times{{{"s", 1.0},
                                               {"ms", 1e-3},
                                               {"us", 1e-6},
                                               {"ns", 1e-9},
                                               {"min", 60.0},
                                               {"h", 3600.0},
                                               {"days", 86400.0}}};
    for (const auto& t : times)
      if (unit == t.suffix)
        return t.factor;
    return std::nullopt;
  }
  case Dimension::Energy: {
    constexpr std::array<UnitFactor, 6> energies{
        {{"J", 1.0}, {"mJ", 1e-3}, {"uJ", 1e-6}, {"nJ", 1e-9}, {"pJ", 1e-12}, {"fJ", 1e-15}}};
    for (const auto& e : energies)
      if (unit == e.suffix)
        return e.factor;
    return std::nullopt;
  }
  case Dimension::Power:
    {
      // The README's power limits run from 1 mW to 10 MW: every unit in that span is accepted.
      constexpr std::array<UnitFactor, 4> powers{{{"mW", 1e-3}, {"W", 1.0}, {"kW", 1e3}, {"MW", 1e6}}};
      for (const auto& p : powers)
        if (unit == p.suffix)
          return p.factor;
      return std::nullopt;
    }
  }
  return std::nullopt;
}

} // namespace

std::string dimension_examples(Dimension dimension) {
  switch (dimension) {
  case Dimension::Bandwidth:
    return "25GB/s, 200Gb/s or a number in bytes/s";
  case Dimension::Time:
    return "1us, 0.5ms, 0s, 10min, 2h, 3days or a number in seconds";
  case Dimension::Bytes:
    return "80GB, 40MB, 64GiB or a number of bytes";
  case Dimension::FlopRate:
    return "312TFLOP/s or a number in FLOP/s";
  case Dimension::Flops:
    return "0.2TFLOP, 5GFLOP or a number of FLOPs";
  case Dimension::Energy:
    return "60pJ, 0.9pJ or a number in joules";
  case Dimension::Power:
    return "400W, 1.2kW, 2MW or a number in watts";
  }
  return "";
}

std::optional<double> parse_quantity(std::string_view text, Dimension dimension, std::string* error) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front())))
    text.remove_prefix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back())))
    text.remove_suffix(1);
  double value = 0.0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || !std::isfinite(value)) {
    std::string message = quoted(text); // built by appends: GCC 12 warns (-Wrestrict, falsely) on "'" + std::string
    message.append(" is not a quantity (expected e.g. ")
        .append(dimension_examples(dimension))
        .append(")");
    *error = std::move(message);
    return std::nullopt;
  }
  std::string_view unit(end, static_cast<size_t>(text.data() + text.size() - end));
  while (!unit.empty() && std::isspace(static_cast<unsigned char>(unit.front())))
    unit.remove_prefix(1);
  if (unit.empty())
    return value;
  auto factor = factor_for(unit, dimension);
  if (!factor) {
    *error = "unknown unit " + quoted(unit) + " (expected e.g. " + dimension_examples(dimension) + ")";
    return std::nullopt;
  }
  return value * *factor;
}

} // namespace memwall::model
