// The PostgreSQL schema `warden`: numbered migrations, applied in one
// transaction under an advisory lock, so hosts starting at once migrate
// exactly once and a half-applied migration is never visible.
#pragma once

#include "store/postgres/pg_conn.h"

namespace warden::pg {

inline constexpr int kSchemaVersion = 20;

// warden's advisory locks take two keys (class, key), so they never collide
// with an application's single-key locks:
//   (kLockClass, 0)                          migrations
//   (kLockClass, kJobCountsFoldLock)         a fold of the job counts
//   (kWorkerLockClass, worker id)            a worker's session lock
//   (kConcurrencyLockClass, hashtext(key))   a claim of a concurrency key
// Worker ids must fit in int4 (about 2 billion registrations).
inline constexpr int kLockClass = 0x77617264;  // "ward"
inline constexpr int kWorkerLockClass = 0x77617265;
inline constexpr int kConcurrencyLockClass = 0x77617266;
inline constexpr int kJobCountsFoldLock = 1;

// 0 when the schema was never created.
Result<int> ReadSchemaVersion(Conn& conn);
// Creates or upgrades the schema; refuses a schema newer than this binary.
Status Migrate(Conn& conn);

}  // namespace warden::pg
