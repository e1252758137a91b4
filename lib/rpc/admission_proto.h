// Proto forms of the engine's replies: admitted containers, admission decisions with their
// explanation (every provider's hints and the merged hint, NUMA ids as OS ids), and the
// allocation listing. The daemon writes them; clients read an explanation back into the
// domain value (ExplainResponseToResult) and render it as offline explain does.
//
// A container's cpu_quota_unlimited follows from what it holds and the configured kubelet
// feature gates (`gates`), which is why every writer of a ContainerAllocation takes them.
#pragma once

#include <vector>

#include "absl/status/statusor.h"

#include "lib/admission/admission.h"
#include "lib/config/config.h"
#include "lib/engine/engine.h"
#include "topologyd/v1/topologyd.pb.h"

namespace topologyd::rpc {

using FeatureGates = config::Config::FeatureGates;

void ContainerToProto(const state::ContainerRecord& in, const FeatureGates& gates,
                      topologyd::v1::ContainerAllocation* out);
void AdmitReplyToProto(const engine::AdmitReply& in, const FeatureGates& gates,
                       topologyd::v1::AdmitResponse* out);
void ExplainReplyToProto(const engine::ExplainReply& in, const FeatureGates& gates,
                         topologyd::v1::ExplainResponse* out);
// ExplainReplyToProto's reply read back: the decision and its explanation, hint masks over
// positions of `numa` (the ascending OS ids the reply mentions). The result has no new
// state, and its containers no init or sidecar marks (the reply does not carry them).
struct ExplainedResult {
  admission::AdmissionResult result;
  hints::NumaIndex numa;
};
// INVALID_ARGUMENT for a reply this build cannot read: a malformed CPU list, an unknown policy
// or scope, more NUMA ids than a mask holds.
absl::StatusOr<ExplainedResult> ExplainResponseToResult(const topologyd::v1::ExplainResponse& in);

void AllocationsToProto(const engine::AllocationsView& in, const FeatureGates& gates,
                        topologyd::v1::ListAllocationsResponse* out);

}  // namespace topologyd::rpc
