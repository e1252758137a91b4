#include "tests/unit/cri_relay/fake_runtime.h"

#include <string_view>
#include <vector>

#include <grpcpp/security/server_credentials.h>
#include <grpcpp/server_builder.h>

#include "lib/cri_relay/call_support.h"

namespace topologyd::cri_relay::testing {

// One call: reads the whole request stream, then answers by method.
class FakeCall final : public grpc::ServerGenericBidiReactor {
 public:
  FakeCall(FakeRuntime& runtime, grpc::GenericCallbackServerContext& ctx)
      : runtime_(runtime), ctx_(ctx) {
    runtime_.Record(ctx_);
    StartRead(&read_);
  }

  void OnReadDone(bool ok) override {
    if (ok) {
      request_ += ToBytes(read_);
      StartRead(&read_);
      return;
    }
    Answer();
  }

  void OnWriteDone(bool ok) override {
    if (ok && next_ < responses_.size()) {
      WriteNext();
    } else {
      Finish(grpc::Status::OK);
    }
  }

  void OnCancel() override {
    if (ctx_.method() != kWaitForCancel) return;
    runtime_.NoteCancelled();
    Finish(grpc::Status(grpc::StatusCode::CANCELLED, "cancelled as asked"));
  }

  void OnDone() override { delete this; }

 private:
  void Answer() {
    const std::string& method = ctx_.method();
    if (method == kEcho) {
      ctx_.AddInitialMetadata("x-initial", "hello");
      ctx_.AddTrailingMetadata("x-trailer", "bye");
      Reply("echo:" + request_);
    } else if (method == kStream) {
      const int n = std::stoi(request_);
      for (int i = 0; i < n; ++i) responses_.push_back(ToByteBuffer("item-" + std::to_string(i)));
      if (responses_.empty()) {
        Finish(grpc::Status::OK);
      } else {
        WriteNext();
      }
    } else if (method == kFail) {
      ctx_.AddTrailingMetadata("x-reason", "gone");
      ctx_.AddTrailingMetadata("x-blob-bin", kBlob);
      Finish(grpc::Status(grpc::StatusCode::FAILED_PRECONDITION, kFailMessage, kFailDetails));
    } else if (method == kWaitForCancel) {
      // OnCancel answers.
    } else if (method == kInspect) {
      Reply("inspected");
    } else if (method == kEmpty) {
      Reply("");
    } else if (method == kSilent) {
      Finish(grpc::Status::OK);
    } else {
      Reply(method);
    }
  }

  void Reply(const std::string& bytes) {
    responses_.push_back(ToByteBuffer(bytes));
    WriteNext();
  }

  void WriteNext() { StartWrite(&responses_[next_++]); }

  FakeRuntime& runtime_;
  grpc::GenericCallbackServerContext& ctx_;
  grpc::ByteBuffer read_;
  std::string request_;
  std::vector<grpc::ByteBuffer> responses_;
  size_t next_ = 0;
};

FakeRuntime::FakeRuntime(const std::string& socket_path) {
  grpc::ServerBuilder builder;
  builder.AddListeningPort("unix:" + socket_path, grpc::InsecureServerCredentials());
  builder.SetMaxReceiveMessageSize(kMaxMessageBytes);
  builder.SetMaxSendMessageSize(kMaxMessageBytes);
  builder.RegisterCallbackGenericService(this);
  server_ = builder.BuildAndStart();
}

FakeRuntime::~FakeRuntime() {
  if (server_ != nullptr) server_->Shutdown(std::chrono::system_clock::now());
}

grpc::ServerGenericBidiReactor* FakeRuntime::CreateReactor(
    grpc::GenericCallbackServerContext* ctx) {
  return new FakeCall(*this, *ctx);
}

void FakeRuntime::Record(grpc::GenericCallbackServerContext& ctx) {
  absl::MutexLock lock(&mu_);
  ++calls_[ctx.method()];
  if (ctx.method() != kInspect) return;
  inspected_metadata_.clear();
  for (const auto& [key, value] : ctx.client_metadata()) {
    inspected_metadata_.emplace(std::string(key.data(), key.size()),
                                std::string(value.data(), value.size()));
  }
  inspected_deadline_ = ctx.deadline();
}

void FakeRuntime::NoteCancelled() {
  absl::MutexLock lock(&mu_);
  ++cancellations_;
}

int FakeRuntime::calls(const std::string& method) const {
  absl::MutexLock lock(&mu_);
  auto it = calls_.find(method);
  return it == calls_.end() ? 0 : it->second;
}

void FakeRuntime::AwaitCalls(const std::string& method, int count) const {
  absl::MutexLock lock(&mu_);
  auto arrived = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    auto it = calls_.find(method);
    return it != calls_.end() && it->second >= count;
  };
  mu_.Await(absl::Condition(&arrived));
}

void FakeRuntime::AwaitCancellation() const {
  absl::MutexLock lock(&mu_);
  auto cancelled = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return cancellations_ > 0; };
  mu_.Await(absl::Condition(&cancelled));
}

std::multimap<std::string, std::string> FakeRuntime::inspected_metadata() const {
  absl::MutexLock lock(&mu_);
  return inspected_metadata_;
}

std::chrono::system_clock::time_point FakeRuntime::inspected_deadline() const {
  absl::MutexLock lock(&mu_);
  return inspected_deadline_;
}

}  // namespace topologyd::cri_relay::testing
