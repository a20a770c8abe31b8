// The storage ceiling: the least SQL a job's life needs, issued in batches
// by one process with no queue logic, on the store warden uses (SQLite in
// WAL mode with synchronous=FULL; PostgreSQL with fsync and synchronous
// commits on). Every transaction commits durably.
//
// Per batch of B jobs, three transactions:
//   insert  B rows (state available, a '{}' payload)
//   claim   B available rows in id order: state running, lease_token + 1,
//           returning (id, lease_token) (PostgreSQL: FOR UPDATE SKIP LOCKED)
//   complete them fenced by (id, lease_token): an UPDATE to done, or a DELETE
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace bench {

struct Claimed {
  int64_t id;
  int64_t token;
};

class CeilingStore {
 public:
  virtual ~CeilingStore() = default;
  // Drops and creates the one table.
  virtual bool Reset() = 0;
  virtual bool Insert(int batch) = 0;
  virtual bool Claim(int batch, std::vector<Claimed>* out) = 0;
  virtual bool Complete(const std::vector<Claimed>& jobs, bool remove) = 0;
};

// `path`: a SQLite file (created).
std::unique_ptr<CeilingStore> OpenSqliteCeiling(const std::string& path);
// `url`: a libpq connection URI; the table lives in schema `ceiling`.
std::unique_ptr<CeilingStore> OpenPgCeiling(const std::string& url);

}  // namespace bench
