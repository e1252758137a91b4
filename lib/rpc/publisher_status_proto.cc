#include "lib/rpc/publisher_status_proto.h"

#include <chrono>

namespace topologyd::rpc {
namespace {

void SetTimestamp(std::chrono::system_clock::time_point t, google::protobuf::Timestamp* out) {
  const auto since_epoch = t.time_since_epoch();
  const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(since_epoch);
  out->set_seconds(seconds.count());
  out->set_nanos(static_cast<int32_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(since_epoch - seconds).count()));
}

}  // namespace

void PlacementSyncStatusToProto(const placement::PlacementSyncStatus& status,
                                topologyd::v1::PlacementSyncStatus* out) {
  out->set_endpoint(status.endpoint);
  out->set_root_provider_name(status.root_provider_name);
  out->set_root_provider_uuid(status.root_provider_uuid);
  out->set_syncs(status.syncs);
  out->set_failed_syncs(status.failed_syncs);
  out->set_consecutive_failures(status.consecutive_failures);
  if (status.last_sync_time) SetTimestamp(*status.last_sync_time, out->mutable_last_sync_time());
  out->set_last_trigger(status.last_trigger);
  out->set_last_ok(status.last_ok);
  out->set_last_error(status.last_error);
  if (status.last_success_time) {
    SetTimestamp(*status.last_success_time, out->mutable_last_success_time());
  }
  out->set_microversion(status.microversion);
  out->set_providers(status.providers);
  out->set_providers_written(status.providers_written);
  out->set_providers_deleted(status.providers_deleted);
  out->set_providers_kept(status.providers_kept);
}

void NrtApiPublishStatusToProto(const nrt_api::NrtApiPublishStatus& status,
                                topologyd::v1::NrtPublishStatus* out) {
  out->set_server(status.server);
  out->set_node_name(status.node_name);
  out->set_publishes(status.publishes);
  out->set_failed_publishes(status.failed_publishes);
  out->set_consecutive_failures(status.consecutive_failures);
  if (status.last_attempt_time) {
    SetTimestamp(*status.last_attempt_time, out->mutable_last_attempt_time());
  }
  out->set_last_trigger(status.last_trigger);
  out->set_last_ok(status.last_ok);
  out->set_last_error(status.last_error);
  if (status.last_success_time) {
    SetTimestamp(*status.last_success_time, out->mutable_last_success_time());
  }
  out->set_published_generation(status.published_generation);
  out->set_last_delay_us(static_cast<uint64_t>(status.last_delay.count()));
}

}  // namespace topologyd::rpc
