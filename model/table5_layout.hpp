// The seed's Table 5 layout (header and one row), shared by `memwall tables` and `memwall run`.
#pragma once

#include "step_metrics.hpp"

#include <string>

namespace memwall::model {

std::string table5_header();
std::string table5_row(const std::string& label, const StepMetrics& m);

} // namespace memwall::model
