// The simulation's only source of randomness: xoshiro256** seeded through
// splitmix64, so one 64-bit seed fixes every choice of a run on every
// platform (no std::random_device, no distribution classes whose output
// differs between standard libraries).
#pragma once

#include <cstdint>

namespace warden::sim {

inline uint64_t SplitMix64(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// A stateless hash of a few numbers: per-job, per-attempt facts (how long an
// attempt runs, whether it fails) must not depend on the order in which the
// scheduler happened to ask for them.
inline uint64_t Mix(uint64_t a, uint64_t b, uint64_t c = 0) {
  uint64_t s = a ^ (b * 0x9e3779b97f4a7c15ULL) ^ (c * 0xc2b2ae3d27d4eb4fULL);
  return SplitMix64(s);
}

class Rng {
 public:
  explicit Rng(uint64_t seed) {
    for (uint64_t& word : s_) word = SplitMix64(seed);
  }

  uint64_t Next() {
    const uint64_t result = Rotl(s_[1] * 5, 7) * 9;
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = Rotl(s_[3], 45);
    return result;
  }

  // Uniform in [lo, hi] (inclusive). The modulo bias is irrelevant here.
  int64_t Range(int64_t lo, int64_t hi) {
    if (hi <= lo) return lo;
    return lo + static_cast<int64_t>(Next() % static_cast<uint64_t>(hi - lo + 1));
  }
  // True with probability percent/100.
  bool Percent(int percent) { return static_cast<int>(Next() % 100) < percent; }
  // In [0, 1).
  double Unit() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }

 private:
  static uint64_t Rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t s_[4];
};

}  // namespace warden::sim
