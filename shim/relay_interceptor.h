// The relay's hook, for the CRI calls CriHandlers intercepts: hands each step that may wait
// (on topologyd, the API server or the runtime) to a worker and answers the relay from there;
// the bookkeeping after a sandbox's or a container's creation runs on the relay's thread.
#pragma once

#include <string_view>

#include "lib/cri_relay/interceptor.h"

#include "shim/cri_handlers.h"
#include "shim/work_queue.h"

namespace topologyd::shim {

class RelayInterceptor final : public cri_relay::Interceptor {
 public:
  RelayInterceptor(CriHandlers* handlers, WorkQueue* workers)
      : handlers_(handlers), workers_(workers) {}

  bool Intercepts(std::string_view method) const override;
  void BeforeForward(const cri_relay::CallInfo& call, std::string request,
                     cri_relay::InterceptDone done) override;
  void AfterForward(const cri_relay::CallInfo& call, const std::string& forwarded_request,
                    grpc::Status status, std::string response,
                    cri_relay::InterceptDone done) override;

 private:
  CriHandlers* const handlers_;
  WorkQueue* const workers_;
};

}  // namespace topologyd::shim
