// Parsing of quantities with units ("25GB/s", "200Gb/s", "1us", "80GB", "312TFLOP/s", "0.2TFLOP", "60pJ",
// "400W"). A plain number is taken in the SI base unit of its dimension (bytes/s, s, bytes, FLOP/s, J, W).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace memwall::model {

enum class Dimension { Bandwidth, Time, Bytes, FlopRate, Flops, Energy, Power };

std::string dimension_examples(Dimension dimension);

// The value in SI base units, or std::nullopt with *error set to a short reason.
std::optional<double> parse_quantity(std::string_view text, Dimension dimension, std::string* error);

} // namespace memwall::model
