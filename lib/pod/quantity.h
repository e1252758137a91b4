// Quantity: a Kubernetes resource quantity ("2", "1500m", "0.5", "1Gi", "129e6", ...), parsed
// with the grammar and rounding of apimachinery's resource.ParseQuantity.
//
// apimachinery keeps the exact decimal value, rounded up (away from zero) to nano units
// (10^-9), and caps binary-suffixed values at 2^63-1. This type stores exactly that value as
// a whole part and a nano fraction of the same sign, so comparisons are exact (kubelet's QoS
// rule compares requests and limits with Quantity.Cmp) and the accessors round the way kubelet
// reads them:
//   - MilliValue(): CPU in millicores, rounded up ("0.0001" -> 1m), as MilliValue() does;
//   - Value(): bytes or a device count, rounded up, as Value() does;
//   - AsInt64(): the exact integer, or nullopt when there is a fraction, as AsInt64() (the
//     memory manager refuses such requests).
//
// Deviation: apimachinery accepts arbitrarily large decimal values; we refuse values whose
// magnitude is 2^62 (about 4.6e18) or more with INVALID_ARGUMENT, which is far beyond any
// node resource. Binary-suffixed values are capped at 2^63-1 first, as apimachinery does, and
// therefore also refused when above 2^62.
//
// Thread-safety: a plain value.
#pragma once

#include <compare>
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace topologyd::pod {

class Quantity {
 public:
  static constexpr int64_t kNanosPerUnit = 1'000'000'000;
  static constexpr int64_t kMaxWhole = int64_t{1} << 62;

  constexpr Quantity() = default;

  // The integer `value` (bytes, CPUs, devices).
  static Quantity FromInt(int64_t value);
  // `milli` thousandths (millicores).
  static Quantity FromMilli(int64_t milli);

  // Parses `text` as apimachinery's ParseQuantity does:
  //   [+-] digits [. digits] suffix, suffix one of "", n, u, m, k, M, G, T, P, E (decimal SI),
  //   Ki, Mi, Gi, Ti, Pi, Ei (binary SI) or e/E followed by a signed integer exponent.
  // Quirks kept on purpose: "1." and ".5" are valid, a missing number means 0 ("Gi" == 0).
  // INVALID_ARGUMENT `invalid quantity "<text>": <reason>` otherwise (empty, bad characters,
  // unknown suffix, too large); <text> is escaped and cut to 64 bytes (lib/common/quote.h).
  // Time is linear in the length of `text`.
  static absl::StatusOr<Quantity> Parse(std::string_view text);

  // Rounded up (away from zero) to an integer / to thousandths, as kubelet's Value() and
  // MilliValue(). MilliValue() saturates at +-2^62 for values above ~4.6e15.
  int64_t Value() const;
  int64_t MilliValue() const;
  // The exact integer value, or nullopt when the value has a fraction.
  std::optional<int64_t> AsInt64() const;

  bool IsZero() const { return whole_ == 0 && nanos_ == 0; }
  bool IsNegative() const { return whole_ < 0 || nanos_ < 0; }
  int64_t whole() const { return whole_; }
  int32_t nanos() const { return nanos_; }

  // Saturating addition (at +-2^62 whole units); exact below that.
  Quantity operator+(const Quantity& other) const;
  Quantity& operator+=(const Quantity& other) { return *this = *this + other; }

  // The exact value as text, for messages and for sending on: the integer when exact ("2",
  // "1073741824"), else the milli value ("1500m"), else the nano value ("1n",
  // "20000000000000000001n"). Parse(ToString()) gives back this value.
  std::string ToString() const;

  friend std::ostream& operator<<(std::ostream& os, const Quantity& q) {
    return os << q.ToString();
  }
  friend bool operator==(const Quantity&, const Quantity&) = default;
  friend std::strong_ordering operator<=>(const Quantity& a, const Quantity& b) {
    if (auto c = a.whole_ <=> b.whole_; c != 0) return c;
    return a.nanos_ <=> b.nanos_;
  }

 private:
  constexpr Quantity(int64_t whole, int32_t nanos) : whole_(whole), nanos_(nanos) {}

  int64_t whole_ = 0;  // integer part, truncated toward zero
  int32_t nanos_ = 0;  // fraction in 10^-9 units, same sign as whole_ (or either when whole_ 0)
};

}  // namespace topologyd::pod
