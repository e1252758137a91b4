// JSON form of an admission / explain answer (docs/cli.md, `admit`), as `topoctl admit|explain
// --output json` prints it and the daemon's RPC layer may embed it:
//
//   {"admitted": bool, "reason": "", "message": "",
//    "containers": [{"name": "", "cpus": "LIST", "exclusive": bool, "numa_affinity": [ids],
//                    "memory_numa": [ids], "devices": {"RESOURCE": ["ID", ...]}}],
//   and with the explanation:
//    "policy": "single-numa-node", "scope": "container|pod", "notes": ["..."],
//    "hints":  [{"container": "NAME" | null,                 (null = the pod, pod scope)
//                "providers": {"devices"|"cpu"|"memory":
//                   null                                      (no map: no preference at all)
//                 | {"RESOURCE": null                         (no preference for the resource)
//                              | [{"affinity": [ids] | null, "preferred": bool}, ...]
//                                                             (kubelet's list; [] = cannot be
//                                                              satisfied; null affinity = any)
//                              | {"upward_closed": true, "universe": [ids],
//                                 "hints": [{"affinity": [ids], "preferred": bool}, ...]}}}}],
//                                                             (only the minimal masks: every
//                                                              superset inside `universe` is
//                                                              also a hint, not preferred)
//    "merged": [{"container": "NAME" | null, "affinity": [ids] | null, "preferred": bool,
//                "admit": bool,
//                "limit_error": "..."}]}                    (only for a merge given up at its
//                                                             limits: MergeStep::limit_error)
//
// `hints` and `merged` have one entry per merge, in the order admission performed them
// (container scope: one per container up to the rejecting one; pod scope: one; policy none:
// none). A provider's explicit lists are exactly the `providers` entries `topoctl merge` reads.
// Every NUMA id is an OS id. Pure functions.
#pragma once

#include "nlohmann/json.hpp"

#include "lib/admission/admission.h"
#include "lib/admission/node_policy.h"

namespace topologyd::admission {

nlohmann::json ContainerToJson(const state::ContainerRecord& container);

// One provider's answer (see above), NUMA positions translated to OS ids by `numa`.
nlohmann::json ProviderHintsToJson(const hints::ProviderHints& hints, const hints::NumaIndex& numa);

// The document above; the explanation keys only when `with_explanation`.
nlohmann::json AdmissionResultToJson(const NodePolicy& node, const AdmissionResult& result,
                                     bool with_explanation);
// The same with hint masks over positions of `numa` (a client reading the daemon's reply).
nlohmann::json AdmissionResultToJson(const hints::NumaIndex& numa, const AdmissionResult& result,
                                     bool with_explanation);

}  // namespace topologyd::admission
