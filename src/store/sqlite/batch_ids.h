// A batch's job ids, shared by SqliteStore's claim and finish paths: all of
// them as one statement parameter, and each one's place in the batch.
#pragma once

#include <algorithm>
#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "warden/job.h"

namespace warden::sqlite {

// "[1,2,3]": a list of ids as one parameter, for `IN (SELECT value FROM
// json_each(?))`, so that one prepared statement serves any batch size.
inline std::string JsonIdList(std::span<const JobId> ids) {
  std::string out = "[";
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i) out += ',';
    out += std::to_string(ids[i]);
  }
  return out + "]";
}

// Places in a batch by job id, sorted by id: a batch's rows come back from
// SQLite in rowid order and are matched to their places here (a sorted
// vector, not a map with a heap node per job).
using IdPlaces = std::vector<std::pair<JobId, size_t>>;

inline std::optional<size_t> PlaceOf(const IdPlaces& places, JobId id) {
  auto it = std::lower_bound(places.begin(), places.end(), std::pair(id, size_t{0}));
  if (it == places.end() || it->first != id) return std::nullopt;
  return it->second;
}

}  // namespace warden::sqlite
