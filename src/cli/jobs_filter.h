// The job filter flags `warden jobs` and its bulk commands share, and the
// bulk commands themselves (cmd_jobs_bulk.cc).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "cli/cli.h"
#include "warden/bulk.h"

namespace warden::cli {

struct FilterOptions {
  std::vector<std::string> states;
  std::string queue, task, unique_key, concurrency_key, search;
  std::string created_after, created_before, finished_after, finished_before;
  std::string error_kind;
  bool rescued = false;
  // Into `f`: a bad state, error kind or time is kInvalidArgument naming its flag.
  Status Read(JobFilter* f) const;
  bool Any() const;  // any condition given
};

void AddFilterOptions(CLI::App* cmd, const std::shared_ptr<FilterOptions>& o);

// `warden jobs retry|cancel|delete` without an id: the dry run's count, or
// the operation run here (or followed, when a `serve` runs it). `retry`:
// a retry's options (--fresh).
Action RunBulkCommand(Globals& g, BulkAction action, const std::shared_ptr<FilterOptions>& filter,
                      bool dry_run, bool all, RetryOptions retry = {});

// `warden jobs bulk [ID] [--resume]`.
void AddBulkCommands(CLI::App* jobs, Globals& g, Action* action);

}  // namespace warden::cli
