#include "tests/unit/cri_relay/test_client.h"

#include <utility>

#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>
#include <grpcpp/support/channel_arguments.h>

#include "lib/cri_relay/call_support.h"
#include "tests/unit/cri_relay/fake_runtime.h"

namespace topologyd::cri_relay::testing {
namespace {

std::multimap<std::string, std::string> UserMetadata(
    const std::multimap<grpc::string_ref, grpc::string_ref>& metadata) {
  std::multimap<std::string, std::string> out;
  for (const auto& [key, value] : metadata) {
    std::string k(key.data(), key.size());
    if (!IsReservedMetadataKey(k))
      out.emplace(std::move(k), std::string(value.data(), value.size()));
  }
  return out;
}

}  // namespace

std::shared_ptr<grpc::Channel> ChannelTo(const std::string& path) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(kMaxMessageBytes);
  args.SetMaxSendMessageSize(kMaxMessageBytes);
  return grpc::CreateCustomChannel("unix:" + path, grpc::InsecureChannelCredentials(), args);
}

AsyncCall::AsyncCall(const std::shared_ptr<grpc::Channel>& channel, const std::string& method,
                     std::vector<std::string> requests,
                     const std::function<void(grpc::ClientContext&)>& prepare)
    : stub_(channel) {
  for (const std::string& request : requests) requests_.push_back(ToByteBuffer(request));
  if (prepare) prepare(context_);
  stub_.PrepareBidiStreamingCall(&context_, method, grpc::StubOptions(), this);
  WriteNextOrClose();
  StartRead(&read_);
  StartCall();
}

AsyncCall::~AsyncCall() { done_.WaitForNotification(); }

const CallResult& AsyncCall::Wait() {
  done_.WaitForNotification();
  return result_;
}

void AsyncCall::WriteNextOrClose() {
  if (next_ < requests_.size()) {
    StartWrite(&requests_[next_++]);
  } else {
    StartWritesDone();
  }
}

void AsyncCall::OnWriteDone(bool ok) {
  if (ok) WriteNextOrClose();
}

void AsyncCall::OnReadDone(bool ok) {
  if (!ok) return;
  result_.responses.push_back(ToBytes(read_));
  StartRead(&read_);
}

void AsyncCall::OnDone(const grpc::Status& status) {
  result_.status = status;
  result_.initial_metadata = UserMetadata(context_.GetServerInitialMetadata());
  result_.trailing_metadata = UserMetadata(context_.GetServerTrailingMetadata());
  done_.Notify();
}

CallResult Call(const std::shared_ptr<grpc::Channel>& channel, const std::string& method,
                std::vector<std::string> requests,
                const std::function<void(grpc::ClientContext&)>& prepare) {
  AsyncCall call(channel, method, std::move(requests), prepare);
  return call.Wait();
}

}  // namespace topologyd::cri_relay::testing
