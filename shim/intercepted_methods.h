// The CRI methods the shim intercepts, in one table: for each, its step before the runtime has
// the call, its step after, and where the step after runs (docs/shim.md has the same table in
// words). Every other method is relayed untouched.
#pragma once

#include <string>
#include <string_view>

#include "absl/status/status.h"

#include "shim/cri_call.h"
#include "shim/cri_handlers.h"

namespace topologyd::shim {

// Where a method's step after the runtime runs.
enum class AfterThread {
  kRelay,   // it only books what the runtime answered: never waits, so on the relay's thread
  kWorker,  // it calls topologyd or the runtime: on one of the shim's workers
};

// When a method's step after the runtime runs.
enum class AfterWhen {
  kRuntimeOk,  // the runtime did what was asked
  kAlways,     // kubelet goes on as if it had (a removal), and so does the shim
};

struct InterceptedMethod {
  std::string_view name;  // "CreateContainer"
  // Decodes the caller's request into call.request; false when it is not one.
  bool (*decode)(const std::string& bytes, CriCall& call);
  // null: forwarded as sent. Otherwise a refusal (not OK), or OK to forward call.request.
  absl::Status (CriHandlers::*before)(CriCall& call);
  // null: nothing to do after. `response` is the runtime's answer (empty unless it was OK).
  void (CriHandlers::*after)(CriCall& call, const std::string& response);
  AfterWhen after_when;
  AfterThread after_thread;
};

// The method of a full CRI path ("/runtime.v1.RuntimeService/CreateContainer"), or null when
// the shim does not intercept it.
const InterceptedMethod* FindInterceptedMethod(std::string_view full_method);

// call.request as bytes again.
std::string EncodeRequest(const CriCall& call);

}  // namespace topologyd::shim
