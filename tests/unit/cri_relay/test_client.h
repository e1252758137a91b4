// A caller that makes any call, by method name, as a byte stream, and records everything the
// server sent back: enough to compare a call through the relay with the same call made
// directly.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/synchronization/notification.h"
#include <grpcpp/channel.h>
#include <grpcpp/client_context.h>
#include <grpcpp/generic/generic_stub.h>

namespace topologyd::cri_relay::testing {

struct CallResult {
  grpc::Status status;
  std::vector<std::string> responses;
  // gRPC's own keys left out.
  std::multimap<std::string, std::string> initial_metadata;
  std::multimap<std::string, std::string> trailing_metadata;
};

// A channel to the Unix socket at `path` that takes messages up to kMaxMessageBytes.
std::shared_ptr<grpc::Channel> ChannelTo(const std::string& path);

// One call in flight: sends `requests` and half-closes, reads until the status.
class AsyncCall final : public grpc::ClientBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer> {
 public:
  // `prepare` may set the context's deadline or metadata before the call starts.
  AsyncCall(const std::shared_ptr<grpc::Channel>& channel, const std::string& method,
            std::vector<std::string> requests,
            const std::function<void(grpc::ClientContext&)>& prepare = {});
  ~AsyncCall() override;  // waits for the call's end

  void Cancel() { context_.TryCancel(); }
  // Blocks until the call has ended.
  const CallResult& Wait();

  void OnWriteDone(bool ok) override;
  void OnReadDone(bool ok) override;
  void OnDone(const grpc::Status& status) override;

 private:
  void WriteNextOrClose();

  grpc::GenericStub stub_;
  grpc::ClientContext context_;
  std::vector<grpc::ByteBuffer> requests_;
  size_t next_ = 0;
  grpc::ByteBuffer read_;
  CallResult result_;
  absl::Notification done_;
};

// Makes the call and waits for its end.
CallResult Call(const std::shared_ptr<grpc::Channel>& channel, const std::string& method,
                std::vector<std::string> requests,
                const std::function<void(grpc::ClientContext&)>& prepare = {});

}  // namespace topologyd::cri_relay::testing
