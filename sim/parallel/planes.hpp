// Mirror planes: when the flows of the TP ranks of a layout never meet, simulate one rank's.
//
// Every flow a model-parallel run posts outside its TP ring (pipeline sends, context rings, the
// data-parallel, replica and expert-data-parallel rings) joins GPUs of one TP rank: member i of a
// group sends to member i of another. On a rail-optimised fabric (DGX servers, one NIC per GPU, a
// leaf per rail) TP rank i's flows cross only rail i's links, and the t rails are copies of one
// another. Then the t planes of flows are isomorphic: each plane's flows start at the same instants
// (one actor posts a group's t flows together), cross links no other plane touches, and meet the
// same contention, so under CM02 (no cross-traffic) they end at the same instants. Simulating rank 0's
// flows alone and recording every rank's bytes and energy on its own route is then exact: the
// SimGrid comms fall t-fold, and with them the kernel's per-comm costs (issue 28's speed target).
//
// mirror_planes proves it per job, and refuses (returns false) unless every condition holds:
//   - t > 1, one job on the platform (another job's flows would break the symmetry), no link events
//     (a failure hits one plane), no expert all-to-all (its legs cross TP ranks);
//   - every group's TP ring is private (its links carry nothing else: stage_job.hpp), so it never
//     meets a plane's flows;
//   - every plane flow joins GPUs of the same TP rank, and every link is crossed by one plane only;
//   - for each TP rank i, the map from its flows' links to rank 0's (position by position along the
//     corresponding flows' routes) is one-to-one, and maps each link to one of equal bandwidth,
//     latency and sharing policy; corresponding flows carry equal shares to the same groups and have
//     equal route latency and bottleneck (energy per byte may differ: each rank's is recorded on its
//     own route).
// Where it holds, the TP planes are isomorphic copies of plane 0.
#pragma once

#include "stage_job.hpp"

namespace memwall::sim::parallel {

// Whether the job's TP planes mirror one another (above); sets job.mirror_planes to it when `allowed`.
bool mirror_planes(StageJob& job, bool allowed);

} // namespace memwall::sim::parallel
