// The relay's hook, for the CRI calls CriHandlers intercepts: hands each step that may wait
// (on topologyd, the API server or the runtime) to a worker and answers the relay from there;
// the bookkeeping after a sandbox's or a container's creation runs on the relay's thread. A
// container created on a placement topologyd has not written yet (Forward::durability) is
// answered once it has: on the relay's thread when it already is, else from a worker.
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
                     cri_relay::ForwardDone done) override;
  void AfterForward(const cri_relay::CallInfo& call, const std::string& forwarded_request,
                    cri_relay::CallMemo memo, grpc::Status status, std::string response,
                    cri_relay::InterceptDone done) override;

 private:
  CriHandlers* const handlers_;
  WorkQueue* const workers_;
};

}  // namespace topologyd::shim
