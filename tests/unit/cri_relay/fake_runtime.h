// FakeRuntime: a gRPC server on a Unix socket that stands in for the container runtime. It
// knows no service either: it answers every call by its method name.
//
//   /fake.Runtime/Echo           one message: "echo:" + the request; initial metadata
//                                x-initial: hello, trailing x-trailer: bye
//   /fake.Runtime/Stream         the request is a count N: N messages "item-0" ... "item-N-1"
//   /fake.Runtime/Fail           FAILED_PRECONDITION with a message, binary details and
//                                trailing metadata (x-reason, x-blob-bin)
//   /fake.Runtime/WaitForCancel  nothing until the call is cancelled
//   /fake.Runtime/Inspect        records the call's metadata and deadline, answers "inspected"
//   /fake.Runtime/Empty          one message of zero bytes (as an empty protobuf message is)
//   /fake.Runtime/Silent         OK without a message (which no unary method may answer)
//   anything else                one message: the method's name
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include <grpcpp/generic/async_generic_service.h>
#include <grpcpp/server.h>

namespace topologyd::cri_relay::testing {

inline constexpr char kEcho[] = "/fake.Runtime/Echo";
inline constexpr char kStream[] = "/fake.Runtime/Stream";
inline constexpr char kFail[] = "/fake.Runtime/Fail";
inline constexpr char kWaitForCancel[] = "/fake.Runtime/WaitForCancel";
inline constexpr char kInspect[] = "/fake.Runtime/Inspect";
inline constexpr char kEmpty[] = "/fake.Runtime/Empty";
inline constexpr char kSilent[] = "/fake.Runtime/Silent";

inline constexpr char kFailMessage[] = "sandbox is gone";
// Binary on purpose: NUL and high bytes must pass unchanged.
inline const std::string kFailDetails = std::string("\x00\x01\xff details", 11);
inline const std::string kBlob = std::string("\x00\xfe blob", 7);

inline constexpr int kMaxMessageBytes = 32 * 1024 * 1024;

class FakeRuntime : public grpc::CallbackGenericService {
 public:
  explicit FakeRuntime(const std::string& socket_path);
  ~FakeRuntime() override;

  // How many calls of `method` have arrived.
  int calls(const std::string& method) const;
  // Blocks until `count` calls of `method` have arrived.
  void AwaitCalls(const std::string& method, int count) const;
  // Blocks until a WaitForCancel call has seen its cancellation.
  void AwaitCancellation() const;

  // The last Inspect call's metadata and deadline.
  std::multimap<std::string, std::string> inspected_metadata() const;
  std::chrono::system_clock::time_point inspected_deadline() const;

  grpc::ServerGenericBidiReactor* CreateReactor(grpc::GenericCallbackServerContext* ctx) override;

 private:
  friend class FakeCall;
  void Record(grpc::GenericCallbackServerContext& ctx);
  void NoteCancelled();

  mutable absl::Mutex mu_;
  std::map<std::string, int> calls_ ABSL_GUARDED_BY(mu_);
  int cancellations_ ABSL_GUARDED_BY(mu_) = 0;
  std::multimap<std::string, std::string> inspected_metadata_ ABSL_GUARDED_BY(mu_);
  std::chrono::system_clock::time_point inspected_deadline_ ABSL_GUARDED_BY(mu_);
  std::unique_ptr<grpc::Server> server_;
};

}  // namespace topologyd::cri_relay::testing
