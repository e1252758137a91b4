// The CRI runtime.v1 methods declared unary, for the relay's unary path (cri_relay::RelayOptions).
#pragma once

#include <functional>
#include <set>
#include <string>

namespace topologyd::shim {

// Full paths ("/runtime.v1.RuntimeService/ListContainers") of every unary method of the CRI's
// RuntimeService and ImageService up to cri-api v0.37. A method's kind never changes once
// published; methods added later are not listed and still pass, as byte streams.
std::set<std::string, std::less<>> CriUnaryMethods();

}  // namespace topologyd::shim
