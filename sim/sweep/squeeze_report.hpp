// The seed's Table 6 (batch squeeze) from simulated sweep results: the fixed per-step cost is the
// simulated all-reduce + optimizer time of each point.
#pragma once

#include "results_table.hpp"

#include <ostream>

namespace memwall::sweep {

void print_squeeze_report(std::ostream& out, const ResultsTable& results, double b_crit_tokens);

} // namespace memwall::sweep
