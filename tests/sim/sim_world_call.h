// World::Call: a store call over the simulated network (see sim_world.h).
// Included at the end of sim_worker.h.
#pragma once

#include <algorithm>
#include <string>
#include <string_view>
#include <utility>

#include "sim_world.h"

namespace warden::sim {

template <typename T>
void World::Call(SimWorker& w, const char* what, std::function<Result<T>(MemStore&, TimeMs)> apply,
                 std::function<void(Result<T>)> done_fn) {
  const int owner = w.process();
  // The calling thread waits for this; a worker whose thread hangs in a
  // call (a lost reply waits for the timeout) is not a healthy one.
  const uint64_t call = w.CallBegin();
  std::function<void(Result<T>)> done = [&w, call, done_fn = std::move(done_fn)](Result<T> r) {
    w.CallEnd(call);
    done_fn(std::move(r));
  };
  const bool sqlite = sc_.backend == Backend::kSqlite;
  const SimUs timeout_at = w.TrueWhenMono(w.MonoUs() + sc_.t.call_timeout.count() * kUsPerMs);
  auto fail_at = [this, owner, done, what](SimUs at, const char* why) {
    Post(at, owner, [done, what, why] { done(Unavailable(std::string(what) + ": " + why)); });
  };
  Fate req = NetFate(w, now_, /*request=*/true);
  const bool claim = std::string_view(what) == "claim";
  if (req.busy) return fail_at(now_ + req.delay, "database is busy");
  if (req.lost || now_ + req.delay > timeout_at) {
    return fail_at(timeout_at, sqlite ? "database is locked" : "timed out");
  }
  // SQLite: the statement runs in the caller's process, frozen and killed
  // with it. PostgreSQL: on the server, whatever becomes of the caller.
  const int applier = sqlite ? owner : kWorldOwner;
  SimWorker* caller = &w;
  Post(now_ + req.delay, applier,
       [this, caller, what, apply = std::move(apply), done, fail_at, timeout_at, claim, sqlite,
        owner] {
         Result<T> r = apply(store_, StoreNow());
         store_changed_ = true;
         if (trace_.wanted()) {
           trace_.Line(now_, "store: {} from {} (worker {}) applied{}", what, caller->info().name,
                       caller->id(), r.has_value() ? "" : ": " + r.error().ToString());
         }
         Fate rep = NetFate(*caller, now_, /*request=*/false);
         if (sqlite) rep = Fate{};
         // PostgreSQL: now and then the connection dies after a claim's
         // COMMIT; the worker never learns it holds the jobs until a
         // heartbeat lists them (Worker::Impl::ReleaseLostClaims).
         if (claim && !sqlite && rng_.Percent(3)) rep.lost = true;
         // SQLite: the statement ran in the caller's own process, which
         // returns its result however long it was frozen meanwhile.
         if (rep.lost || (!sqlite && now_ + rep.delay > timeout_at)) {
           if (trace_.wanted())
             trace_.Line(now_, "network: reply to {}'s {} lost", caller->info().name, what);
           return fail_at(std::max(now_, timeout_at), "timed out (reply lost)");
         }
         Post(now_ + rep.delay, owner, [done, r = std::move(r)] { done(r); });
       });
}

}  // namespace warden::sim
