// Names the calling thread, so that `top -H`, `ps -L` and debuggers tell the daemon's own
// threads (commit writer, reconcile loop, socket accept loop) apart from gRPC's.
#pragma once

#include <pthread.h>

#include <string>
#include <string_view>

namespace topologyd {

// Linux keeps at most 15 bytes of a thread name; longer names are cut, not refused.
inline void NameThisThread(std::string_view name) {
  constexpr size_t kMaxThreadName = 15;
  const std::string cut(name.substr(0, kMaxThreadName));
  // Naming is a debugging aid: a failure changes nothing the daemon does.
  (void)pthread_setname_np(pthread_self(), cut.c_str());
}

}  // namespace topologyd
