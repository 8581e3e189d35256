#pragma once
// Strong unit types. Inside moesim every quantity that crosses a module border carries its unit
// in its type (or, for plain doubles in hot loops and JSON fields, in its name: `_s`, `_bytes`).
#include <compare>

namespace moesim {

/// A double tagged with a unit. Only same-unit addition/comparison and scaling are allowed;
/// cross-unit products live below as named free functions.
template <class Tag>
class Quantity {
 public:
  constexpr Quantity() = default;
  constexpr explicit Quantity(double v) : value_(v) {}
  [[nodiscard]] constexpr double value() const { return value_; }

  constexpr Quantity& operator+=(Quantity o) { value_ += o.value_; return *this; }
  constexpr Quantity& operator-=(Quantity o) { value_ -= o.value_; return *this; }
  friend constexpr Quantity operator+(Quantity a, Quantity b) { return Quantity(a.value_ + b.value_); }
  friend constexpr Quantity operator-(Quantity a, Quantity b) { return Quantity(a.value_ - b.value_); }
  friend constexpr Quantity operator*(Quantity a, double k) { return Quantity(a.value_ * k); }
  friend constexpr Quantity operator*(double k, Quantity a) { return Quantity(a.value_ * k); }
  friend constexpr Quantity operator/(Quantity a, double k) { return Quantity(a.value_ / k); }
  /// Ratio of two quantities of the same unit is a plain number.
  friend constexpr double operator/(Quantity a, Quantity b) { return a.value_ / b.value_; }
  friend constexpr auto operator<=>(Quantity a, Quantity b) = default;

 private:
  double value_ = 0.0;
};

struct SecondsTag {};
struct BytesTag {};
struct FlopsTag {};
struct BytesPerSecondTag {};
struct FlopsPerSecondTag {};

using Seconds = Quantity<SecondsTag>;                 ///< seconds
using Bytes = Quantity<BytesTag>;                     ///< bytes (B)
using Flops = Quantity<FlopsTag>;                     ///< floating-point operations (an FMA is 2)
using BytesPerSecond = Quantity<BytesPerSecondTag>;   ///< B/s
using FlopsPerSecond = Quantity<FlopsPerSecondTag>;   ///< FLOP/s

constexpr Seconds operator/(Flops f, FlopsPerSecond r) { return Seconds(f.value() / r.value()); }
constexpr Seconds operator/(Bytes b, BytesPerSecond r) { return Seconds(b.value() / r.value()); }
constexpr Bytes operator*(BytesPerSecond r, Seconds t) { return Bytes(r.value() * t.value()); }
constexpr Flops operator*(FlopsPerSecond r, Seconds t) { return Flops(r.value() * t.value()); }

inline constexpr double kGB = 1e9;                        ///< nccl-tests and datasheets: GB = 1e9 B
inline constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;  ///< capacities of HBM are quoted in GiB-ish GB; we keep bytes
inline constexpr double kTera = 1e12;

[[nodiscard]] constexpr BytesPerSecond gigabytes_per_second(double gbps) { return BytesPerSecond(gbps * kGB); }
/// Network links are quoted in gigabits per second (400 Gb/s NDR = 50 GB/s).
[[nodiscard]] constexpr BytesPerSecond gigabits_per_second(double gbit) { return BytesPerSecond(gbit * 1e9 / 8.0); }
[[nodiscard]] constexpr FlopsPerSecond teraflops_per_second(double tf) { return FlopsPerSecond(tf * kTera); }
[[nodiscard]] constexpr Seconds microseconds(double us) { return Seconds(us * 1e-6); }

}  // namespace moesim
