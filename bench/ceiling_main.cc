// warden_bench_ceiling: the storage ceiling (see ceiling.h). One run.
//
//   warden_bench_ceiling --db sqlite:PATH|postgresql://... --batch B --jobs N
//                        [--mode life|claim-complete|insert] [--complete update|delete]
//                        [--run I]
//
// life: insert, claim and complete each batch; claim-complete: the jobs are
// inserted first (untimed), then claimed and completed; insert: inserts only.
// Prints one JSON line (jobs/s).
#include <cstdio>

#include "bench_util.h"
#include "ceiling.h"

int main(int argc, char** argv) {
  const bench::Args a(argc, argv, 1);
  const std::string url = a.Str("db", "");
  const std::string mode = a.Str("mode", "life");
  const std::string complete = a.Str("complete", "update");
  const int batch = static_cast<int>(a.Int("batch", 1000));
  const int64_t jobs = a.Int("jobs", 50'000);
  if (url.empty() || batch < 1 || jobs < batch ||
      (mode != "life" && mode != "claim-complete" && mode != "insert") ||
      (complete != "update" && complete != "delete")) {
    std::fprintf(stderr, "bad arguments (see the header of bench/ceiling_main.cc)\n");
    return 2;
  }
  const bool pg = bench::IsPostgres(url);
  auto store = pg ? bench::OpenPgCeiling(url)
                  : bench::OpenSqliteCeiling(url.rfind("sqlite:", 0) == 0 ? url.substr(7) : url);
  if (!store->Reset()) return 1;
  const int64_t rounds = jobs / batch;
  if (mode == "claim-complete") {
    for (int64_t i = 0; i < rounds; ++i) {
      if (!store->Insert(batch)) return 1;
    }
  }
  std::vector<bench::Claimed> claimed;
  const auto t0 = std::chrono::steady_clock::now();
  for (int64_t i = 0; i < rounds; ++i) {
    if (mode != "claim-complete" && !store->Insert(batch)) return 1;
    if (mode == "insert") continue;
    if (!store->Claim(batch, &claimed)) return 1;
    if (static_cast<int>(claimed.size()) != batch) {
      std::fprintf(stderr, "claimed %zu of %d\n", claimed.size(), batch);
      return 1;
    }
    if (!store->Complete(claimed, complete == "delete")) return 1;
  }
  const double seconds = bench::SecondsSince(t0);
  std::string variant = mode + " B=" + std::to_string(batch);
  if (mode != "insert") variant += complete == "delete" ? " (complete=delete)" : "";
  bench::Emit({{"scenario", "ceiling"},
               {"system", pg ? "ceiling-pg" : "ceiling-sqlite"},
               {"variant", variant},
               {"run", a.Int("run", 1)},
               {"jobs", rounds * batch},
               {"jobs_per_s", rounds * batch / seconds}});
  return 0;
}
