#include "lib/pod/quantity.h"

#include <algorithm>
#include <string>

#include "fmt/format.h"

#include "lib/common/quote.h"

namespace topologyd::pod {
namespace {

// apimachinery's error texts, so operators see the messages they know from kubectl.
constexpr std::string_view kErrFormatWrong =
    "quantities must match the regular expression "
    "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
constexpr std::string_view kErrNumeric = "unable to parse numeric part of quantity";
constexpr std::string_view kErrSuffix = "unable to parse quantity's suffix";

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

struct Lexed {
  bool positive = true;
  std::string_view value;  // sign and number as written (apimachinery's `value`)
  std::string_view num;    // integer digits without leading zeros; "0" when none
  std::string_view denom;  // fraction digits as written
  std::string_view suffix;
};

// A transcription of apimachinery's parseQuantityString: the same scanning order gives the
// same quirks ("1." and "Gi" are accepted).
bool Lex(std::string_view str, Lexed& out) {
  size_t pos = 0;
  const size_t end = str.size();
  if (pos < end && (str[0] == '-' || str[0] == '+')) {
    out.positive = str[0] == '+';
    ++pos;
  }
  while (true) {
    if (pos >= end) {
      out.num = "0";
      out.value = "0";
      return true;
    }
    if (str[pos] != '0') break;
    ++pos;
  }
  size_t i = pos;
  while (i < end && IsDigit(str[i])) ++i;
  out.num = str.substr(pos, i - pos);
  if (i >= end) {
    out.value = str;
    return true;
  }
  pos = i;
  if (out.num.empty()) out.num = "0";
  if (str[pos] == '.') {
    ++pos;
    i = pos;
    while (i < end && IsDigit(str[i])) ++i;
    out.denom = str.substr(pos, i - pos);
    if (i >= end) {
      out.value = str;
      return true;
    }
    pos = i;
  }
  out.value = str.substr(0, pos);
  const size_t suffix_start = pos;
  constexpr std::string_view kSuffixChars = "eEinumkKMGTP";
  while (pos < end && kSuffixChars.find(str[pos]) != std::string_view::npos) ++pos;
  if (pos >= end) {
    out.suffix = str.substr(suffix_start);
    return true;
  }
  if (str[pos] == '-' || str[pos] == '+') ++pos;
  while (pos < end && IsDigit(str[pos])) ++pos;
  if (pos < end) return false;
  out.suffix = str.substr(suffix_start);
  return true;
}

struct Suffix {
  int base = 10;
  int64_t exponent = 0;
};

bool InterpretSuffix(std::string_view s, Suffix& out) {
  struct Entry {
    std::string_view name;
    int base;
    int exponent;
  };
  static constexpr Entry kTable[] = {
      {"n", 10, -9}, {"u", 10, -6}, {"m", 10, -3}, {"", 10, 0},   {"k", 10, 3},  {"M", 10, 6},
      {"G", 10, 9},  {"T", 10, 12}, {"P", 10, 15}, {"E", 10, 18}, {"Ki", 2, 10}, {"Mi", 2, 20},
      {"Gi", 2, 30}, {"Ti", 2, 40}, {"Pi", 2, 50}, {"Ei", 2, 60},
  };
  for (const Entry& e : kTable) {
    if (e.name == s) {
      out = Suffix{e.base, e.exponent};
      return true;
    }
  }
  if (s.size() > 1 && (s[0] == 'e' || s[0] == 'E')) {
    // strconv.ParseInt(s[1:], 10, 64) accepts one leading sign; the result must fit int32.
    std::string_view digits = s.substr(1);
    bool negative = false;
    if (digits[0] == '+' || digits[0] == '-') {
      negative = digits[0] == '-';
      digits.remove_prefix(1);
    }
    if (digits.empty() || digits.size() > 12) return false;
    int64_t v = 0;
    for (char c : digits) {
      if (!IsDigit(c)) return false;
      v = v * 10 + (c - '0');
    }
    v = negative ? -v : v;
    if (v > INT32_MAX || v < INT32_MIN) return false;
    out = Suffix{10, v};
    return true;
  }
  return false;
}

// Decimal digit string times two, in place.
void Double(std::string& digits) {
  int carry = 0;
  for (auto it = digits.rbegin(); it != digits.rend(); ++it) {
    int d = (*it - '0') * 2 + carry;
    *it = static_cast<char>('0' + d % 10);
    carry = d / 10;
  }
  if (carry != 0) digits.insert(digits.begin(), static_cast<char>('0' + carry));
}

// Whether the magnitude is at least 10^19, above kMaxWhole (2^62 ~ 4.6e18), judged from the
// integer digits and the suffix alone: a binary suffix only makes the value larger.
bool AtLeastTenToThe19(const Lexed& lexed, const Suffix& suffix) {
  if (lexed.num == "0") return false;  // no integer digits, or only zeros
  const int64_t exp10 =
      static_cast<int64_t>(lexed.num.size()) - 1 + (suffix.base == 10 ? suffix.exponent : 0);
  return exp10 >= 19;
}

// The fraction digits `denom`, times 2^binary_exp, rounded up to nano units: only the first
// 9 + binary_exp digits can change that, the rest only whether it rounds up. Those are
// replaced by one digit 1 when any of them is non-zero. (With D the digits kept and R < 1 the
// rest as a fraction of the last kept unit, the nano value is (D + R) / 5^binary_exp, whose
// ceiling is the same for every R in (0, 1).)
std::string SignificantFraction(std::string_view denom, int64_t binary_exp) {
  const size_t keep = static_cast<size_t>(9 + binary_exp);
  if (denom.size() <= keep + 1) return std::string(denom);
  std::string out(denom.substr(0, keep));
  if (denom.find_first_not_of('0', keep) != std::string_view::npos) out += '1';
  return out;
}

// `text` is untrusted and unbounded (it may come straight from an RPC): quote it shortened and
// escaped, so the message stays small enough for a gRPC status.
absl::Status Invalid(std::string_view text, std::string_view reason) {
  return absl::InvalidArgumentError(
      fmt::format("invalid quantity {}: {}", QuoteForMessage(text), reason));
}

// whole + fraction / 10^fraction_digits written in units of 10^-fraction_digits, as digits:
// the product whole * 10^9 would overflow 64 bits for whole above ~1.8e10.
std::string InUnits(uint64_t whole, uint32_t fraction, int fraction_digits) {
  if (whole == 0) return fmt::format("{}", fraction);
  return fmt::format("{}{:0{}}", whole, fraction, fraction_digits);
}

}  // namespace

Quantity Quantity::FromInt(int64_t value) {
  return Quantity(std::clamp(value, -kMaxWhole, kMaxWhole), 0);
}

Quantity Quantity::FromMilli(int64_t milli) {
  return Quantity(milli / 1000, static_cast<int32_t>((milli % 1000) * 1'000'000));
}

absl::StatusOr<Quantity> Quantity::Parse(std::string_view text) {
  if (text.empty()) return Invalid(text, kErrFormatWrong);
  Lexed lexed;
  if (!Lex(text, lexed)) return Invalid(text, kErrFormatWrong);
  Suffix suffix;
  if (!InterpretSuffix(lexed.suffix, suffix)) return Invalid(text, kErrSuffix);

  // apimachinery takes an int64 fast path when the digits fit; otherwise it parses `value`
  // with inf.Dec, which needs at least one digit ("Ei" alone fails there, "Gi" does not).
  const size_t digit_count = lexed.num.size() + lexed.denom.size();
  bool slow_path;
  if (suffix.base == 10) {
    slow_path = static_cast<int64_t>(digit_count) > 18 ||
                suffix.exponent - static_cast<int64_t>(lexed.denom.size()) < -9;
  } else {
    const int64_t precision = 15 - static_cast<int64_t>(lexed.num.size()) -
                              static_cast<int64_t>(static_cast<float>(suffix.exponent) * 3 / 10) -
                              1;
    slow_path = !lexed.denom.empty() || precision < 0;
  }
  if (slow_path && std::none_of(lexed.value.begin(), lexed.value.end(), IsDigit)) {
    return Invalid(text, kErrNumeric);
  }

  // Before any work that grows with the text: a long number either is too large, or has
  // fraction digits of which only the first few can change the nano-rounded value.
  if (AtLeastTenToThe19(lexed, suffix)) return Invalid(text, "too large");
  const std::string denom = suffix.base == 2 ? SignificantFraction(lexed.denom, suffix.exponent)
                                             : std::string(lexed.denom);

  // Exact value = digits * 2^binary_exp * 10^decimal_exp.
  std::string digits = std::string(lexed.num) + denom;
  int64_t decimal_exp = -static_cast<int64_t>(denom.size());
  if (suffix.base == 2) {
    for (int64_t k = 0; k < suffix.exponent; ++k) Double(digits);
  } else {
    decimal_exp += suffix.exponent;
  }
  digits.erase(0, std::min(digits.find_first_not_of('0'), digits.size()));
  if (digits.empty()) return Quantity();

  // Scale to nano units, rounding the magnitude up like inf.RoundUp.
  const int64_t nano_exp = decimal_exp + 9;
  std::string nanos_digits;
  if (nano_exp >= 0) {
    if (static_cast<int64_t>(digits.size()) + nano_exp > 30) return Invalid(text, "too large");
    nanos_digits = digits + std::string(static_cast<size_t>(nano_exp), '0');
  } else {
    const int64_t drop = -nano_exp;
    bool round_up;
    if (drop >= static_cast<int64_t>(digits.size())) {
      nanos_digits = "0";
      round_up = true;  // digits is non-zero
    } else {
      const size_t keep = digits.size() - static_cast<size_t>(drop);
      round_up = digits.find_first_not_of('0', keep) != std::string::npos;
      nanos_digits = digits.substr(0, keep);
      if (nanos_digits.size() > 30) return Invalid(text, "too large");
    }
    if (round_up) {
      // +1 on a decimal string.
      int i = static_cast<int>(nanos_digits.size()) - 1;
      while (i >= 0 && nanos_digits[static_cast<size_t>(i)] == '9') {
        nanos_digits[static_cast<size_t>(i)] = '0';
        --i;
      }
      if (i < 0) {
        nanos_digits.insert(nanos_digits.begin(), '1');
      } else {
        ++nanos_digits[static_cast<size_t>(i)];
      }
    }
  }
  if (nanos_digits.size() < 10) nanos_digits.insert(0, 10 - nanos_digits.size(), '0');
  const std::string whole_digits = nanos_digits.substr(0, nanos_digits.size() - 9);
  const std::string frac_digits = nanos_digits.substr(nanos_digits.size() - 9);
  if (whole_digits.size() > 19) return Invalid(text, "too large");
  uint64_t whole = 0;
  for (char c : whole_digits) whole = whole * 10 + static_cast<uint64_t>(c - '0');
  int32_t frac = 0;
  for (char c : frac_digits) frac = frac * 10 + (c - '0');
  // Binary SI is capped at 2^63-1 by apimachinery; we refuse anything above 2^62 anyway.
  if (whole > static_cast<uint64_t>(kMaxWhole) ||
      (whole == static_cast<uint64_t>(kMaxWhole) && frac != 0)) {
    return Invalid(text, "too large");
  }
  const int64_t signed_whole = static_cast<int64_t>(whole);
  return lexed.positive ? Quantity(signed_whole, frac) : Quantity(-signed_whole, -frac);
}

int64_t Quantity::Value() const {
  if (nanos_ > 0) return whole_ + 1;
  if (nanos_ < 0) return whole_ - 1;
  return whole_;
}

int64_t Quantity::MilliValue() const {
  constexpr int64_t kLimit = kMaxWhole / 1000;
  if (whole_ > kLimit) return kMaxWhole;
  if (whole_ < -kLimit) return -kMaxWhole;
  int64_t milli = whole_ * 1000 + nanos_ / 1'000'000;
  if (nanos_ % 1'000'000 > 0) ++milli;
  if (nanos_ % 1'000'000 < 0) --milli;
  return milli;
}

std::optional<int64_t> Quantity::AsInt64() const {
  if (nanos_ != 0) return std::nullopt;
  return whole_;
}

Quantity Quantity::operator+(const Quantity& other) const {
  // Both parts are at most 2^62 in magnitude; only 2^62 + 2^62 overflows int64.
  int64_t whole;
  if (__builtin_add_overflow(whole_, other.whole_, &whole)) return Quantity(kMaxWhole, 0);
  int64_t nanos = int64_t{nanos_} + other.nanos_;
  whole += nanos / kNanosPerUnit;
  nanos %= kNanosPerUnit;
  // Restore "same sign" between the parts.
  if (whole > 0 && nanos < 0) {
    --whole;
    nanos += kNanosPerUnit;
  } else if (whole < 0 && nanos > 0) {
    ++whole;
    nanos -= kNanosPerUnit;
  }
  if (whole > kMaxWhole || (whole == kMaxWhole && nanos > 0)) return Quantity(kMaxWhole, 0);
  if (whole < -kMaxWhole || (whole == -kMaxWhole && nanos < 0)) return Quantity(-kMaxWhole, 0);
  return Quantity(whole, static_cast<int32_t>(nanos));
}

std::string Quantity::ToString() const {
  if (nanos_ == 0) return fmt::format("{}", whole_);
  const std::string_view sign = IsNegative() ? "-" : "";
  const uint64_t abs_whole = static_cast<uint64_t>(whole_ < 0 ? -whole_ : whole_);
  const uint32_t abs_nanos = static_cast<uint32_t>(nanos_ < 0 ? -nanos_ : nanos_);
  if (abs_nanos % 1'000'000 == 0) {
    return fmt::format("{}{}m", sign, InUnits(abs_whole, abs_nanos / 1'000'000, 3));
  }
  return fmt::format("{}{}n", sign, InUnits(abs_whole, abs_nanos, 9));
}

}  // namespace topologyd::pod
