// The CRI's methods as of the CRI API v0.37 (runtime.v1): every one is unary or
// server-streaming, so its caller sends exactly one request before it waits for anything. The
// relay uses that to send the runtime a call's headers together with its request; a method not
// listed here (a newer CRI) is relayed without that assumption.
//
// Pure; thread-safe.
#pragma once

#include <string_view>

namespace topologyd::shim {

// `method` is a full gRPC path ("/runtime.v1.RuntimeService/ListContainers").
bool IsKnownCriMethod(std::string_view method);

}  // namespace topologyd::shim
