#include "lib/rpc/topologyd_service.h"

#include <chrono>
#include <string_view>
#include <vector>

#include "fmt/format.h"

#include "lib/cgroup/container_cgroup.h"
#include "lib/cgroup/types.h"
#include "lib/common/version.h"
#include "lib/pod/validate.h"
#include "lib/rpc/admission_proto.h"
#include "lib/rpc/nrt_reply.h"
#include "lib/rpc/plan_container_proto.h"
#include "lib/rpc/pod_proto.h"
#include "lib/rpc/publisher_status_proto.h"
#include "lib/rpc/topology_proto.h"

namespace topologyd::rpc {
namespace {

namespace v1 = ::topologyd::v1;

// absl and gRPC share the canonical status codes.
grpc::Status ToGrpc(const absl::Status& s) {
  return grpc::Status(static_cast<grpc::StatusCode>(s.code()), std::string(s.message()));
}

grpc::Status InvalidArgument(const std::string& message) {
  return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, message);
}

// Allocate and Release name an admitted pod and container; holding them to Admit's rules
// (lib/pod/validate.h) keeps odd bytes and huge strings out of replies and logs.
grpc::Status CheckField(std::string_view field, const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  return InvalidArgument(fmt::format("{}: {}", field, std::string(status.message())));
}

// The configuration's default is the one the pod parsers assume when given none.
static_assert(config::LimitsConfig{}.containers_per_pod == pod::kDefaultMaxContainersPerPod);

// The pod of an Admit or Explain, with the configured container bound (live on reload).
absl::StatusOr<pod::Pod> RequestPod(const engine::Engine& engine, const v1::Pod& in) {
  return PodFromProto(in, engine.config()->limits.containers_per_pod);
}

// The INVALID_ARGUMENT message for request bytes that do not parse as `Request`.
std::string UnparsableMessage(std::string_view method,
                              const google::protobuf::Descriptor* request) {
  return fmt::format(
      "{}: the request does not parse as {} (malformed protobuf, or a string that is not valid "
      "UTF-8)",
      method, request->full_name());
}

void SetDuration(std::chrono::steady_clock::duration d, google::protobuf::Duration* out) {
  auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(d).count();
  out->set_seconds(ns / 1000000000);
  out->set_nanos(static_cast<int32_t>(ns % 1000000000));
}

}  // namespace

TopologydService::TopologydService(engine::Engine* engine, const PeerRegistry* peers,
                                   uid_t daemon_uid)
    : engine_(engine), peers_(peers), daemon_uid_(daemon_uid) {
  ParseRequestsOf("Admit", &TopologydService::Admit);
  ParseRequestsOf("AwaitDurable", &TopologydService::AwaitDurable);
  ParseRequestsOf("PlanContainer", &TopologydService::PlanContainer);
  ParseRequestsOf("Allocate", &TopologydService::Allocate);
  ParseRequestsOf("Release", &TopologydService::Release);
  ParseRequestsOf("Explain", &TopologydService::Explain);
  ParseRequestsOf("ListAllocations", &TopologydService::ListAllocations);
  ParseRequestsOf("GetTopology", &TopologydService::GetTopology);
  ParseRequestsOf("GetNodeResourceTopology", &TopologydService::GetNodeResourceTopology);
  ParseRequestsOf("Status", &TopologydService::Status);
  // WatchAllocations streams: the same parsing, with a stream that ends at once for bytes that
  // do not parse.
  using Watch = v1::ListAllocationsResponse;
  const int watch = MethodIndex(v1::Topologyd::service_full_name(), "WatchAllocations",
                                v1::WatchAllocationsRequest::descriptor(), Watch::descriptor());
  MarkMethodCallback(
      watch,
      new grpc::internal::CallbackServerStreamingHandler<grpc::ByteBuffer, Watch>(
          [this](grpc::CallbackServerContext* context,
                 const grpc::ByteBuffer* bytes) -> grpc::ServerWriteReactor<Watch>* {
            v1::WatchAllocationsRequest request;
            grpc::ByteBuffer copy(*bytes);  // Deserialize consumes its buffer
            if (grpc::SerializationTraits<v1::WatchAllocationsRequest>::Deserialize(&copy, &request)
                    .ok()) {
              return WatchAllocations(context, &request);
            }
            grpc::Status allowed = CheckPeer(*context);
            in_flight_->fetch_add(1);
            return AllocationsWatch::Refuse(
                allowed.ok() ? InvalidArgument(UnparsableMessage(
                                   "WatchAllocations", v1::WatchAllocationsRequest::descriptor()))
                             : allowed,
                [in_flight = in_flight_] { in_flight->fetch_sub(1); });
          }));
}

template <class Request, class Response>
void TopologydService::ParseRequestsOf(
    std::string_view method,
    grpc::ServerUnaryReactor* (TopologydService::*handler)(grpc::CallbackServerContext*,
                                                           const Request*, Response*)) {
  const std::string service = v1::Topologyd::service_full_name();
  int index = MethodIndex(service, method, Request::descriptor(), Response::descriptor());
  auto unparsable = [this, message = UnparsableMessage(method, Request::descriptor())](
                        grpc::CallbackServerContext* context) {
    grpc::Status allowed = CheckPeer(*context);
    return allowed.ok() ? InvalidArgument(message) : allowed;
  };
  MarkMethodCallback(index,
                     ParsingUnaryHandler<Request, Response>(
                         unparsable, [this, handler](grpc::CallbackServerContext* context,
                                                     const Request* request, Response* response) {
                           return (this->*handler)(context, request, response);
                         }));
}

grpc::Status TopologydService::CheckPeer(const grpc::ServerContextBase& context) const {
  if (peers_ == nullptr) return grpc::Status::OK;
  std::optional<PeerRegistry::Peer> peer = peers_->Lookup(context.peer());
  if (!peer) {
    return grpc::Status(grpc::StatusCode::PERMISSION_DENIED,
                        "caller credentials unknown; connect over the daemon's Unix socket");
  }
  if (!peer->refused.empty()) {
    return grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED, peer->refused);
  }
  const PeerCredentials& creds = peer->creds;
  if (!IsPeerAllowed(engine_->config()->allowed_peers, creds, daemon_uid_)) {
    return grpc::Status(grpc::StatusCode::PERMISSION_DENIED,
                        fmt::format("uid {} gid {} is not in allowedPeers", creds.uid, creds.gid));
  }
  return grpc::Status::OK;
}

grpc::ServerUnaryReactor* TopologydService::Status(grpc::CallbackServerContext* context,
                                                   const v1::StatusRequest*,
                                                   v1::StatusResponse* response) {
  return Answer(context, [&] { return StatusReply(response); });
}

grpc::Status TopologydService::StatusReply(v1::StatusResponse* response) const {
  engine::EngineStatus status = engine_->Status();
  const config::Config& config = *status.config;
  response->set_version(kVersion);
  SetDuration(status.uptime, response->mutable_uptime());
  response->set_config_path(config.source_file);
  response->set_socket_path(config.SocketPath());
  response->set_cpu_manager_policy(config.cpu_manager_policy);
  response->set_topology_manager_policy(config.topology_manager_policy);
  response->set_topology_manager_scope(config.topology_manager_scope);
  response->set_memory_manager_policy(config.memory_manager_policy);
  response->set_state_generation(status.state_generation);
  response->set_admitted_pods(status.admitted_pods);
  if (status.last_reload) {
    const engine::ReloadRecord& r = *status.last_reload;
    v1::ReloadStatus* out = response->mutable_last_reload();
    out->set_ok(r.ok);
    for (const auto& k : r.applied_keys) out->add_applied_keys(k);
    for (const auto& k : r.refused_keys) out->add_refused_keys(k);
    out->set_error(r.error);
    SetDuration(std::chrono::steady_clock::now() - r.at, out->mutable_age());
  }
  v1::CgroupStatus* cgroup = response->mutable_cgroup();
  cgroup->set_apply(config.cgroup.apply);
  cgroup->set_version(status.cgroup_version.empty() ? config.cgroup.version
                                                    : status.cgroup_version);
  cgroup->set_writes(status.cgroup.writes);
  cgroup->set_failed_writes(status.cgroup.failed_writes);
  cgroup->set_drift_repairs(status.cgroup.drift_repairs);
  cgroup->set_constrained(status.cgroup.constrained);
  cgroup->set_driver(std::string(cgroup::ToString(config.cgroup.driver)));
  cgroup->set_root(config.cgroup.root);
  response->set_healthy(status.healthy);
  v1::CheckpointStatus* checkpoint = response->mutable_checkpoint();
  checkpoint->set_path(status.checkpoint.path);
  checkpoint->set_durable_generation(status.checkpoint.durable_generation);
  checkpoint->set_writes(status.checkpoint.writes);
  checkpoint->set_failed_writes(status.checkpoint.failed_writes);
  checkpoint->set_last_batch(static_cast<uint32_t>(status.checkpoint.last_batch));
  checkpoint->set_last_error(status.checkpoint.last_error);
  if (status.checkpoint.write_running) {
    SetDuration(*status.checkpoint.write_running, checkpoint->mutable_write_running());
  }
  response->set_problem(status.problem);
  if (placement_status_)
    PlacementSyncStatusToProto(placement_status_(), response->mutable_placement());
  if (nrt_api_status_) {
    NrtApiPublishStatusToProto(nrt_api_status_(), response->mutable_nrt_api_server());
  }
  return grpc::Status::OK;
}

grpc::ServerUnaryReactor* TopologydService::GetTopology(grpc::CallbackServerContext* context,
                                                        const v1::GetTopologyRequest*,
                                                        v1::GetTopologyResponse* response) {
  return Answer(context, [&] {
    TopologyToProto(*engine_->topology(), response->mutable_topology());
    return grpc::Status::OK;
  });
}

grpc::ServerUnaryReactor* TopologydService::GetNodeResourceTopology(
    grpc::CallbackServerContext* context, const v1::GetNodeResourceTopologyRequest* request,
    v1::GetNodeResourceTopologyResponse* response) {
  return Answer(context, [&] { return NodeResourceTopologyReply(*engine_, *request, response); });
}

}  // namespace topologyd::rpc

namespace topologyd::rpc {

grpc::ServerUnaryReactor* TopologydService::BeginCall(grpc::CallbackServerContext* context) {
  in_flight_->fetch_add(1);
  return context->DefaultReactor();
}

void TopologydService::Finish(grpc::ServerUnaryReactor* reactor, const grpc::Status& status) {
  std::shared_ptr<std::atomic<int>> in_flight = in_flight_;  // `this` may be gone after Finish
  reactor->Finish(status);
  in_flight->fetch_sub(1);
}

grpc::ServerUnaryReactor* TopologydService::Answer(grpc::CallbackServerContext* context,
                                                   const std::function<grpc::Status()>& reply) {
  grpc::ServerUnaryReactor* reactor = BeginCall(context);
  grpc::Status allowed = CheckPeer(*context);
  return FinishNow(reactor, allowed.ok() ? reply() : allowed);
}

grpc::ServerUnaryReactor* TopologydService::FinishNow(grpc::ServerUnaryReactor* reactor,
                                                      const grpc::Status& status) {
  Finish(reactor, status);
  return reactor;
}

template <class T>
grpc::ServerUnaryReactor* TopologydService::AnswerWhenDurable(
    grpc::CallbackServerContext* context, const std::function<grpc::Status()>& check,
    const std::function<void(engine::Completion<T>)>& start, std::function<void(const T&)> reply) {
  grpc::ServerUnaryReactor* reactor = BeginCall(context);
  grpc::Status allowed = CheckPeer(*context);
  if (allowed.ok()) allowed = check();
  if (!allowed.ok()) return FinishNow(reactor, allowed);
  start([this, reactor, reply = std::move(reply)](absl::StatusOr<T> done) {
    if (done.ok()) reply(*done);
    Finish(reactor, done.ok() ? grpc::Status::OK : ToGrpc(done.status()));
  });
  return reactor;
}

grpc::ServerUnaryReactor* TopologydService::Admit(grpc::CallbackServerContext* context,
                                                  const v1::AdmitRequest* request,
                                                  v1::AdmitResponse* response) {
  absl::StatusOr<pod::Pod> pod;
  return AnswerWhenDurable<engine::AdmitReply>(
      context,
      [&] {
        if (!request->has_pod()) return InvalidArgument("pod: required");
        pod = RequestPod(*engine_, request->pod());
        return pod.ok() ? grpc::Status::OK : ToGrpc(pod.status());
      },
      [&](engine::Completion<engine::AdmitReply> done) {
        engine_->AdmitAsync(*pod, std::move(done),
                            request->answer_when_decided() ? engine::AnswerWhen::kDecided
                                                           : engine::AnswerWhen::kDurable);
      },
      [this, response](const engine::AdmitReply& reply) {
        AdmitReplyToProto(reply, engine_->config()->feature_gates, response);
        response->set_instance(engine_->instance());
      });
}

grpc::ServerUnaryReactor* TopologydService::PlanContainer(grpc::CallbackServerContext* context,
                                                          const v1::PlanContainerRequest* request,
                                                          v1::PlanContainerResponse* response) {
  grpc::ServerUnaryReactor* reactor = BeginCall(context);
  if (grpc::Status allowed = CheckPeer(*context); !allowed.ok()) return FinishNow(reactor, allowed);
  const size_t max_containers = engine_->config()->limits.containers_per_pod;
  absl::StatusOr<PlanInput> input = PlanInputFromProto(*request, max_containers);
  if (!input.ok()) return FinishNow(reactor, ToGrpc(input.status()));
  absl::StatusOr<std::optional<planner::ResolvedSpec>> spec =
      planner::FullSpec(input->pod, input->given, input->sources, max_containers);
  if (spec.ok() && !*spec && input->container) {
    spec = planner::ResolveSpec(input->pod, *input->container, input->given, input->sources,
                                max_containers);
  }
  if (!spec.ok()) return FinishNow(reactor, ToGrpc(spec.status()));
  if (!*spec) {
    // The sandbox of a pod known only from estimates: its containers come one at a time.
    response->set_outcome(v1::PlanContainerResponse::NOT_PLACED);
    response->set_note(
        fmt::format("pod {}/{} has no full spec: its containers are planned as "
                    "they are created",
                    input->pod.namespace_name, input->pod.name));
    return FinishNow(reactor, grpc::Status::OK);
  }
  absl::StatusOr<pod::Pod> checked = CheckPlannedPod(**spec, max_containers);
  if (!checked.ok()) return FinishNow(reactor, ToGrpc(checked.status()));
  response->set_spec_source((*spec)->source);
  for (const std::string& gap : (*spec)->unknown) response->add_unknown(gap);
  const std::string name = input->container ? input->container->name : std::string();
  absl::StatusOr<pod::Pod> to_admit =
      name.empty() ? checked
                   : planner::PodToAdmit(*checked, engine_->HeldContainers(checked->uid), name);
  if (!to_admit.ok()) {
    // An ephemeral (debug) container is not in the pod's spec: nothing to place.
    response->set_outcome(v1::PlanContainerResponse::NOT_PLACED);
    response->set_note(std::string(to_admit.status().message()));
    return FinishNow(reactor, grpc::Status::OK);
  }
  engine_->AdmitAsync(
      *to_admit,
      [this, reactor, response, name](absl::StatusOr<engine::AdmitReply> done) {
        if (!done.ok()) return Finish(reactor, ToGrpc(done.status()));
        v1::AdmitResponse* admission = response->mutable_admission();
        AdmitReplyToProto(*done, engine_->config()->feature_gates, admission);
        admission->set_instance(engine_->instance());
        response->set_outcome(admission->admitted() ? v1::PlanContainerResponse::PLACED
                                                    : v1::PlanContainerResponse::REFUSED);
        for (const v1::ContainerAllocation& c : admission->containers()) {
          if (!name.empty() && c.name() == name) *response->mutable_container() = c;
          if (c.cpu_quota_unlimited()) response->set_pod_cpu_quota_unlimited(true);
        }
        Finish(reactor, grpc::Status::OK);
      },
      request->answer_when_decided() ? engine::AnswerWhen::kDecided : engine::AnswerWhen::kDurable);
  return reactor;
}

grpc::ServerUnaryReactor* TopologydService::AwaitDurable(grpc::CallbackServerContext* context,
                                                         const v1::AwaitDurableRequest* request,
                                                         v1::AwaitDurableResponse* response) {
  return AnswerWhenDurable<uint64_t>(
      context,
      [&] {
        if (request->instance().empty()) return InvalidArgument("instance: required");
        if (request->instance() != engine_->instance()) {
          return grpc::Status(
              grpc::StatusCode::FAILED_PRECONDITION,
              fmt::format("state generation {} was given out by topologyd instance {}, which "
                          "has stopped (this is {}): a decision it had not written may be lost; "
                          "admit again",
                          request->state_generation(), request->instance(), engine_->instance()));
        }
        return grpc::Status::OK;
      },
      [&](engine::Completion<uint64_t> done) {
        engine_->AwaitDurableAsync(request->state_generation(), std::move(done));
      },
      [response](uint64_t generation) { response->set_state_generation(generation); });
}

grpc::ServerUnaryReactor* TopologydService::Explain(grpc::CallbackServerContext* context,
                                                    const v1::ExplainRequest* request,
                                                    v1::ExplainResponse* response) {
  return Answer(context, [&] {
    if (!request->has_pod()) return InvalidArgument("pod: required");
    absl::StatusOr<pod::Pod> pod = RequestPod(*engine_, request->pod());
    if (!pod.ok()) return ToGrpc(pod.status());
    absl::StatusOr<engine::ExplainReply> reply = engine_->Explain(*pod);
    if (!reply.ok()) return ToGrpc(reply.status());
    ExplainReplyToProto(*reply, engine_->config()->feature_gates, response);
    return grpc::Status::OK;
  });
}

grpc::ServerUnaryReactor* TopologydService::Allocate(grpc::CallbackServerContext* context,
                                                     const v1::AllocateRequest* request,
                                                     v1::AllocateResponse* response) {
  std::string cgroup_path;
  return AnswerWhenDurable<state::ContainerRecord>(
      context,
      [&] {
        if (grpc::Status s = CheckField("pod_uid", pod::ValidatePodUid(request->pod_uid()));
            !s.ok()) {
          return s;
        }
        if (grpc::Status s =
                CheckField("container_name", pod::ValidateContainerName(request->container_name()));
            !s.ok()) {
          return s;
        }
        if (request->container_id().empty()) return InvalidArgument("container_id: required");
        cgroup_path = request->cgroup();
        if (cgroup_path.empty() && !request->cgroup_parent().empty()) {
          // The runtime's naming, from the pod cgroup it was given (a front end's shortcut).
          std::shared_ptr<const config::Config> config = engine_->config();
          absl::StatusOr<std::string> named =
              cgroup::ContainerCgroup(request->cgroup_parent(), request->container_id(),
                                      config->cgroup.driver, config->cgroup.runtime);
          if (!named.ok()) {
            return InvalidArgument(
                fmt::format("cgroup_parent: {}", std::string(named.status().message())));
          }
          cgroup_path = *named;
        }
        return grpc::Status::OK;
      },
      [&](engine::Completion<state::ContainerRecord> done) {
        engine_->AllocateAsync(request->pod_uid(), request->container_name(),
                               request->container_id(), cgroup_path, std::move(done));
      },
      [this, response](const state::ContainerRecord& view) {
        ContainerToProto(view, engine_->config()->feature_gates, response->mutable_container());
      });
}

grpc::ServerUnaryReactor* TopologydService::Release(grpc::CallbackServerContext* context,
                                                    const v1::ReleaseRequest* request,
                                                    v1::ReleaseResponse* response) {
  std::optional<std::string> container;
  if (!request->container_name().empty()) container = request->container_name();
  std::optional<ledger::ReleaseGuard> guard;
  if (!request->container_id().empty()) {
    guard = ledger::ReleaseGuard{.container_id = request->container_id(), .cgroup = std::nullopt};
  }
  return AnswerWhenDurable<uint64_t>(
      context,
      [&] {
        if (grpc::Status s = CheckField("pod_uid", pod::ValidatePodUid(request->pod_uid()));
            !s.ok()) {
          return s;
        }
        if (container) {
          return CheckField("container_name", pod::ValidateContainerName(*container));
        }
        if (guard) return InvalidArgument("container_id: only with container_name");
        return grpc::Status::OK;
      },
      [&](engine::Completion<uint64_t> done) {
        engine_->ReleaseAsync(request->pod_uid(), container, guard ? &*guard : nullptr,
                              std::move(done));
      },
      [response](const uint64_t& generation) { response->set_state_generation(generation); });
}

grpc::ServerUnaryReactor* TopologydService::ListAllocations(grpc::CallbackServerContext* context,
                                                            const v1::ListAllocationsRequest*,
                                                            v1::ListAllocationsResponse* response) {
  return Answer(context, [&] {
    AllocationsToProto(engine_->ListAllocations(), engine_->config()->feature_gates, response);
    return grpc::Status::OK;
  });
}

grpc::ServerWriteReactor<v1::ListAllocationsResponse>* TopologydService::WatchAllocations(
    grpc::CallbackServerContext* context, const v1::WatchAllocationsRequest*) {
  // Counted until the stream has ended, so a stopping daemon waits for the UNAVAILABLE it
  // sends to go out.
  in_flight_->fetch_add(1);
  if (grpc::Status allowed = CheckPeer(*context); !allowed.ok()) {
    return AllocationsWatch::Refuse(allowed, [in_flight = in_flight_] { in_flight->fetch_sub(1); });
  }
  uint64_t id;
  {
    absl::MutexLock lock(&watches_mu_);
    id = next_watch_++;
  }
  std::shared_ptr<AllocationsWatch> watch = AllocationsWatch::Create(
      engine_, {.check_peer = [this, context] { return CheckPeer(*context); },
                .on_done =
                    [this, id, in_flight = in_flight_] {
                      {
                        absl::MutexLock lock(&watches_mu_);
                        watches_.erase(id);
                      }
                      in_flight->fetch_sub(1);
                    }});
  std::optional<std::string> stopping;
  {
    absl::MutexLock lock(&watches_mu_);
    stopping = stopping_;
    if (!stopping) watches_.emplace(id, watch);
  }
  if (stopping) watch->End(grpc::Status(grpc::StatusCode::UNAVAILABLE, *stopping));
  watch->Begin();
  return watch.get();
}

void TopologydService::EndWatches(const std::string& why) {
  std::vector<std::shared_ptr<AllocationsWatch>> ending;
  {
    absl::MutexLock lock(&watches_mu_);
    stopping_ = why;
    for (const auto& [id, weak] : watches_) {
      if (std::shared_ptr<AllocationsWatch> watch = weak.lock()) ending.push_back(watch);
    }
  }
  for (const auto& watch : ending) watch->End(grpc::Status(grpc::StatusCode::UNAVAILABLE, why));
}

}  // namespace topologyd::rpc
