// Proto forms of the engine's replies: admitted containers, admission decisions with their
// explanation (every provider's hints and the merged hint, NUMA ids as OS ids), and the
// allocation listing. One direction only: the daemon answers, it never reads these back.
#pragma once

#include "lib/engine/engine.h"

#include "topologyd/v1/topologyd.pb.h"

namespace topologyd::rpc {

void ContainerViewToProto(const engine::ContainerView& in, topologyd::v1::ContainerAllocation* out);
void AdmitReplyToProto(const engine::AdmitReply& in, topologyd::v1::AdmitResponse* out);
void ExplainReplyToProto(const engine::ExplainReply& in, topologyd::v1::ExplainResponse* out);
void AllocationsToProto(const engine::AllocationsView& in,
                        topologyd::v1::ListAllocationsResponse* out);

}  // namespace topologyd::rpc
