#include "lib/cri_relay/relay.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "fmt/format.h"
#include <grpc/grpc.h>
#include <grpcpp/create_channel.h>
#include <grpcpp/generic/async_generic_service.h>
#include <grpcpp/security/credentials.h>
#include <grpcpp/security/server_credentials.h>
#include <grpcpp/server_builder.h>
#include <grpcpp/support/channel_arguments.h>

#include "lib/cri_relay/call_support.h"
#include "lib/cri_relay/intercepted_call.h"
#include "lib/cri_relay/listen_socket.h"
#include "lib/cri_relay/pass_through_call.h"
#include "lib/cri_relay/unary_pass_through_call.h"

namespace topologyd::cri_relay {

// Every method arrives here as a bidirectional byte stream, whatever its declared kind: a
// unary call is one message and a half-close, answered by one message and OK.
class RelayService final : public grpc::CallbackGenericService {
 public:
  RelayService(const CallEnvironment& env, std::set<std::string, std::less<>> unary_methods)
      : env_(env), unary_methods_(std::move(unary_methods)) {}

  grpc::ServerGenericBidiReactor* CreateReactor(grpc::GenericCallbackServerContext* ctx) override {
    if (std::unique_ptr<CallFilter> filter = Intercept(*ctx)) {
      return StartInterceptedCall(ctx, env_, std::move(filter));
    }
    if (unary_methods_.contains(ctx->method())) return StartUnaryPassThroughCall(ctx, env_);
    return StartPassThroughCall(ctx, env_);
  }

 private:
  std::unique_ptr<CallFilter> Intercept(const grpc::GenericCallbackServerContext& ctx) {
    if (env_.interceptor == nullptr) return nullptr;
    ShutdownGateScope scope(env_.interceptor_calls);
    if (!scope.open()) return nullptr;
    return env_.interceptor->Intercept(CallInfo{ctx.method(), ctx.deadline()});
  }

  const CallEnvironment env_;
  const std::set<std::string, std::less<>> unary_methods_;  // read-only: no lock
};

namespace {

absl::Status CheckOptions(const RelayOptions& options) {
  if (options.upstream_target.empty()) {
    return absl::InvalidArgumentError("the CRI relay needs an upstream target");
  }
  if (options.max_message_bytes <= 0) {
    return absl::InvalidArgumentError(fmt::format(
        "the CRI relay's max message size must be positive, not {}", options.max_message_bytes));
  }
  if (options.reconnect_backoff_ms <= 0 ||
      options.max_reconnect_backoff_ms < options.reconnect_backoff_ms) {
    return absl::InvalidArgumentError(
        fmt::format("the CRI relay's reconnect backoff must be positive and at most its maximum, "
                    "not {} ms (maximum {} ms)",
                    options.reconnect_backoff_ms, options.max_reconnect_backoff_ms));
  }
  return absl::OkStatus();
}

std::shared_ptr<grpc::Channel> UpstreamChannel(const RelayOptions& options) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(options.max_message_bytes);
  args.SetMaxSendMessageSize(options.max_message_bytes);
  // Only the back-off between attempts is shortened: gRPC takes its minimum *connect timeout*
  // from GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, and a short one fails every handshake with a server
  // that takes longer than that to answer (a busy or just-started runtime), again and again.
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, options.reconnect_backoff_ms);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, options.max_reconnect_backoff_ms);
  return grpc::CreateCustomChannel(options.upstream_target, grpc::InsecureChannelCredentials(),
                                   args);
}

}  // namespace

Relay::Relay(std::string listen_path, std::shared_ptr<grpc::Channel> channel)
    : listen_path_(std::move(listen_path)), channel_(std::move(channel)), stub_(channel_) {}

absl::StatusOr<std::unique_ptr<Relay>> Relay::Start(const RelayOptions& options,
                                                    Interceptor* interceptor) {
  if (absl::Status s = CheckOptions(options); !s.ok()) return s;
  if (absl::Status s = PrepareListenPath(options.listen_path); !s.ok()) return s;

  std::unique_ptr<Relay> relay(new Relay(options.listen_path, UpstreamChannel(options)));
  relay->service_ = std::make_unique<RelayService>(
      CallEnvironment{
          .stub = relay->stub_,
          .runtime_contexts = relay->runtime_contexts_,
          .interceptor = interceptor,
          .interceptor_calls = relay->interceptor_calls_,
      },
      options.unary_methods);
  grpc::ServerBuilder builder;
  builder.AddListeningPort("unix:" + options.listen_path, grpc::InsecureServerCredentials());
  builder.SetMaxReceiveMessageSize(options.max_message_bytes);
  builder.SetMaxSendMessageSize(options.max_message_bytes);
  builder.RegisterCallbackGenericService(relay->service_.get());
  relay->server_ = builder.BuildAndStart();
  if (relay->server_ == nullptr) {
    return absl::FailedPreconditionError(fmt::format("cannot listen on {}: {}", options.listen_path,
                                                     DescribeBindFailure(options.listen_path)));
  }
  if (::chmod(options.listen_path.c_str(), options.socket_mode) != 0) {
    return absl::FailedPreconditionError(fmt::format("cannot set the mode of {} to {:o}: {}",
                                                     options.listen_path, options.socket_mode,
                                                     std::strerror(errno)));
  }
  return relay;
}

Relay::~Relay() { Shutdown(std::chrono::system_clock::now()); }

void Relay::Shutdown(std::chrono::system_clock::time_point deadline) {
  std::call_once(shutdown_once_, [&] {
    if (server_ != nullptr) server_->Shutdown(deadline);
    interceptor_calls_.Close();
    runtime_contexts_.Close();
  });
}

}  // namespace topologyd::cri_relay
