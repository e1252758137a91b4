// The relay's hook: a filter per intercepted CRI call (shim/intercepted_methods.h names the
// methods and their steps). Each step that may wait (on topologyd, the API server or the
// runtime) runs on a worker, which answers the relay; the bookkeeping after a sandbox's or a
// container's creation runs on the relay's thread. A container created on a placement
// topologyd has not written yet (CriCall::durability) is answered once it has: on the relay's
// thread when it already is, else from a worker.
#pragma once

#include <memory>

#include "lib/cri_relay/interceptor.h"

#include "shim/cri_handlers.h"
#include "shim/work_queue.h"

namespace topologyd::shim {

class RelayInterceptor final : public cri_relay::Interceptor {
 public:
  RelayInterceptor(CriHandlers* handlers, WorkQueue* workers)
      : handlers_(handlers), workers_(workers) {}

  std::unique_ptr<cri_relay::CallFilter> Intercept(const cri_relay::CallInfo& call) override;

 private:
  CriHandlers* const handlers_;
  WorkQueue* const workers_;
};

}  // namespace topologyd::shim
