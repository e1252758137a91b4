// How pods are told apart in a picture: twelve colours, each also striped and dotted, so 36
// pods look different; beyond that styles repeat and the legend's pod numbers (P1, P2, ...)
// tell pods apart.
//
// Pure; thread-safe.
#pragma once

#include <string_view>

namespace topologyd::picture {

inline constexpr int kPaletteSize = 12;
inline constexpr int kPodStyles = 3 * kPaletteSize;

enum class Fill { kSolid, kStripes, kDots };

struct PodStyle {
  std::string_view colour;  // "#1f77b4"
  Fill fill = Fill::kSolid;
  bool dark = false;  // light text reads better on it
};

// The style of the pod at position `index` (>= 0) of the drawing.
PodStyle StyleOfPod(int index);

}  // namespace topologyd::picture
