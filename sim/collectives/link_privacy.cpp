#include "link_privacy.hpp"

#include <algorithm>
#include <unordered_map>

namespace memwall::collectives {

std::vector<bool> private_rounds(const Schedule& schedule, const RouteLinks& routes) {
  struct Use { // who crossed a link so far
    long long src, dst;
    size_t round; // the latest round that crossed it
    bool one_src = true, one_dst = true, one_per_round = true;
  };
  std::unordered_map<uint64_t, Use> uses;
  for (size_t k = 0; k < schedule.rounds.size(); ++k)
    for (const Flow& f : schedule.rounds[k].flows)
      for (const uint64_t link : routes.at({f.src, f.dst})) {
        auto [it, fresh] = uses.try_emplace(link, Use{f.src, f.dst, k});
        if (fresh)
          continue;
        Use& use = it->second;
        if (use.round == k)
          use.one_per_round = false; // two messages of one round would share it
        use.round = k;
        use.one_src = use.one_src && use.src == f.src;
        use.one_dst = use.one_dst && use.dst == f.dst;
      }
  std::vector<bool> result(schedule.rounds.size());
  for (size_t k = 0; k < schedule.rounds.size(); ++k)
    result[k] =
        std::all_of(schedule.rounds[k].flows.begin(), schedule.rounds[k].flows.end(), [&](const Flow& f) {
          const std::vector<uint64_t>& links = routes.at({f.src, f.dst});
          return std::all_of(links.begin(), links.end(), [&](uint64_t link) {
            const Use& use = uses.at(link);
            return use.one_per_round && (use.one_src || use.one_dst);
          });
        });
  return result;
}

} // namespace memwall::collectives
