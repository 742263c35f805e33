// The seed's Table 5 and Table 6 layouts, shared by the closed-form tables and the simulated ones.
#pragma once

#include "batch_squeeze.hpp"
#include "step_metrics.hpp"

#include <string>

namespace memwall::model {

std::string table5_header();
std::string table5_row(const std::string& label, const StepMetrics& m);

std::string table6_title();
std::string table6_row(const std::string& fabric_label, long long gpus, const SqueezePoint& p);

} // namespace memwall::model
