// Quantity::Parse on arbitrary text (Kubernetes resource quantities from Pod manifests): no
// crash or UB in parsing, arithmetic and printing; ToString() parses back to the same value; the
// error message stays short (it travels in a gRPC status).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "lib/pod/quantity.h"

using topologyd::pod::Quantity;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto quantity = Quantity::Parse(text);
  if (!quantity.ok()) {
    if (quantity.status().message().size() > 400) {
      fprintf(stderr, "unbounded message (%zu bytes)\n", quantity.status().message().size());
      abort();
    }
    return 0;
  }
  (void)quantity->Value();
  (void)quantity->MilliValue();
  (void)quantity->AsInt64();
  const Quantity sum = *quantity + *quantity;
  (void)(sum <=> *quantity);
  const std::string shown = quantity->ToString();
  const auto back = Quantity::Parse(shown);
  if (!back.ok() || *back != *quantity) {
    fprintf(stderr, "round trip failed: whole=%lld nanos=%d -> %s\n",
            static_cast<long long>(quantity->whole()), quantity->nanos(), shown.c_str());
    abort();
  }
  return 0;
}
