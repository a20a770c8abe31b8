// A small deterministic random number generator (SplitMix64), so a seed
// gives the same workload and fault schedule on every platform and standard
// library (std:: distributions are not specified bit for bit).
#pragma once

#include <cstdint>

namespace chaos {

class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}

  uint64_t Next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  // Uniform in [lo, hi] (inclusive).
  int64_t Range(int64_t lo, int64_t hi) {
    return lo +
           static_cast<int64_t>(Next() % static_cast<uint64_t>(hi - lo + 1));
  }
  // Uniform in [0, 1).
  double Unit() {
    return static_cast<double>(Next() >> 11) / 9007199254740992.0;
  }
  bool Chance(double p) { return Unit() < p; }
  // An independent stream for one purpose (workload, faults, ...).
  Rng Fork(uint64_t salt) {
    return Rng(Next() ^ (salt * 0xd1b54a32d192ed03ULL));
  }

 private:
  uint64_t state_;
};

}  // namespace chaos
