// kube-scheduler's settings for the cluster tests: scheduler-plugins' NodeResourceTopologyMatch
// on the default profile, or the default plugins only, with the same queue settings.
#pragma once

#include <string>

#include "tests/support/kube/scheduler_process.h"

namespace topologyd::testing::kube {

// NodeResourceTopologyMatch at every extension point it has (filter, score, reserve, postbind)
// with its overreserve cache: a pod bound to a node counts against every NUMA zone it could
// take until the node's object agrees with the scheduler's pods there (the pods fingerprint;
// Autodetect reads topologyd's method "all"), checked every second. Without the cache
// (passthrough) the scheduler binds a wave on objects that have not caught up yet.
inline constexpr char kNrtCacheMode[] =
    "overreserve, resync every 1 s by pods fingerprint, informer Dedicated";
inline constexpr char kNrtProfile[] =
    "profiles:\n"
    "- schedulerName: default-scheduler\n"
    "  plugins:\n"
    "    multiPoint:\n"
    "      enabled:\n"
    "      - name: NodeResourceTopologyMatch\n"
    "  pluginConfig:\n"
    "  - name: NodeResourceTopologyMatch\n"
    "    args:\n"
    "      scoringStrategy: {type: LeastAllocated}\n"
    "      cacheResyncPeriodSeconds: 1\n"
    "      cache: {informerMode: Dedicated, resyncMethod: Autodetect}\n";

// A pod the filter turned away waits for an event the plugin registers (an update of an object),
// and the cache takes the update in at its next resync, up to a second later. A back-off longer
// than that, honoured even when nothing else waits (kube v1.33's SchedulerPopFromBackoffQ skips
// it then), makes most retries come after the resync. One that still comes before it, on a
// wave's last update, would wait five minutes for the scheduler's periodic flush: a second's
// wait makes it the next flush (every 30 s).
inline SchedulerOptions ClusterScheduler(bool topology_aware) {
  return {.configuration = std::string("podInitialBackoffSeconds: 3\npodMaxBackoffSeconds: 3\n") +
                           (topology_aware ? kNrtProfile : ""),
          .flags = {"--feature-gates=SchedulerPopFromBackoffQ=false",
                    "--pod-max-in-unschedulable-pods-duration=1s"}};
}

}  // namespace topologyd::testing::kube
