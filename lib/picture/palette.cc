#include "lib/picture/palette.h"

#include <array>

namespace topologyd::picture {
namespace {

struct Colour {
  std::string_view hex;
  bool dark;
};

// Tableau's category colours, then light tints of the first six; none is the grey of
// reserved CPUs or the white of the shared pool.
constexpr std::array<Colour, kPaletteSize> kColours = {{
    {"#1f77b4", true},
    {"#ff7f0e", false},
    {"#2ca02c", true},
    {"#d62728", true},
    {"#9467bd", true},
    {"#8c564b", true},
    {"#e377c2", false},
    {"#17becf", false},
    {"#bcbd22", false},
    {"#aec7e8", false},
    {"#ffbb78", false},
    {"#98df8a", false},
}};

}  // namespace

PodStyle StyleOfPod(int index) {
  const int style = index % kPodStyles;
  const Colour& colour = kColours[style % kPaletteSize];
  const Fill fill = static_cast<Fill>(style / kPaletteSize);
  return {.colour = colour.hex, .fill = fill, .dark = colour.dark && fill == Fill::kSolid};
}

}  // namespace topologyd::picture
