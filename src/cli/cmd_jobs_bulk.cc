// warden jobs retry|cancel|delete by filter, warden jobs delete ID, and
// warden jobs bulk (operations, and resuming them).
//
// A bulk command records its operation in the database (warden/bulk.h) and
// runs it in this process, batch by batch; were this process killed, the
// operation resumes where its last batch committed, in any `warden serve`
// or in `warden jobs bulk --resume`, once this process's lease (10 s) runs
// out. Nothing is done twice.
#include <unistd.h>

#include <chrono>
#include <iostream>
#include <thread>

#include "cli/cli.h"
#include "cli/jobs_filter.h"
#include "cli/with_client.h"
#include "warden/duration.h"
#include "warden/plural.h"
#include "warden/text.h"

namespace warden::cli {

Status FilterOptions::Read(JobFilter* f) const {
  for (const std::string& name : states) {
    auto s = ParseJobState(name);
    if (!s) {
      return InvalidArgument("unknown state '" + OneLine(name, 40) + "' (" + JobStateNames() + ")");
    }
    f->states.push_back(*s);
  }
  f->queue = queue;
  f->task = task;
  f->unique_key = unique_key;
  f->concurrency_key = concurrency_key;
  f->search = search;
  f->rescued = rescued;
  if (!error_kind.empty()) {
    f->error_kind = ParseErrorKind(error_kind);
    if (!f->error_kind) {
      return InvalidArgument("unknown error kind '" + OneLine(error_kind, 40) + "' (" +
                             ErrorKindNames() + ")");
    }
  }
  auto time = [](const char* flag, const std::string& text,
                 std::optional<TimeMs>* out) -> Status {
    if (text.empty()) return Status::Ok();
    auto t = ParseTime(text);
    if (!t.has_value()) return t.error().Annotate(flag);
    *out = *t;
    return Status::Ok();
  };
  WARDEN_RETURN_IF_ERROR(time("--created-after", created_after, &f->created_after));
  WARDEN_RETURN_IF_ERROR(time("--created-before", created_before, &f->created_before));
  WARDEN_RETURN_IF_ERROR(time("--finished-after", finished_after, &f->finished_after));
  WARDEN_RETURN_IF_ERROR(time("--finished-before", finished_before, &f->finished_before));
  return Status::Ok();
}

bool FilterOptions::Any() const {
  return !states.empty() || !queue.empty() || !task.empty() || !unique_key.empty() ||
         !concurrency_key.empty() || !search.empty() || !created_after.empty() ||
         !created_before.empty() || !finished_after.empty() || !finished_before.empty() ||
         !error_kind.empty() || rescued;
}

void AddFilterOptions(CLI::App* cmd, const std::shared_ptr<FilterOptions>& o) {
  cmd->add_option("--state", o->states,
                  "only jobs in these states (--state dead,retryable, or --state repeated)")
      ->delimiter(',');
  cmd->add_option("--queue", o->queue, "only jobs on this queue");
  cmd->add_option("--task", o->task, "only jobs of this task");
  cmd->add_option("--unique-key", o->unique_key, "only jobs with this unique key");
  cmd->add_option("--concurrency-key", o->concurrency_key, "only jobs with this concurrency key");
  cmd->add_option("--created-after", o->created_after, "created at or after (RFC 3339)");
  cmd->add_option("--created-before", o->created_before, "created before (RFC 3339)");
  cmd->add_option("--finished-after", o->finished_after, "finished at or after (RFC 3339)");
  cmd->add_option("--finished-before", o->finished_before, "finished before (RFC 3339)");
  cmd->add_option("--search", o->search,
                  "only jobs whose payload JSON or last error contains this text "
                  "(case-sensitive)");
  cmd->add_option("--error-kind", o->error_kind,
                  "only jobs whose last error is of this kind (error, crash, timeout, lost, "
                  "released, crash_loop, cancelled)");
  cmd->add_flag("--rescued", o->rescued,
                "only jobs with an attempt that was rescued (ended lost: its worker died or lost "
                "its lease): the jobs of warden stats' rescued attempts");
}

namespace {

std::string Owner() {
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  return "cli:" + std::string(host) + ":" + std::to_string(getpid());
}

const char* PastTense(BulkAction a) {
  switch (a) {
    case BulkAction::kRetry: return "retried";
    case BulkAction::kCancel: return "cancelled";
    case BulkAction::kDelete: return "deleted";
  }
  return "";
}

void PrintOp(const BulkOp& op) {
  std::cout << "operation " << op.id << " (" << BulkActionName(op.action)
            << (op.fresh ? " --fresh" : "") << ", "
            << BulkStateName(op.state) << "): " << op.done << " of " << Plural(op.total, "job")
            << " " << PastTense(op.action);
  if (op.skipped) std::cout << ", " << op.skipped << " skipped (unique key held)";
  std::cout << ", " << Plural(op.batches, "batch", "batches") << ", by " << op.actor << ", filter "
            << JobFilterToJson(op.filter).dump() << "\n";
}

// Runs operation `id` here; if another runner holds it, follows it to its
// end instead.
Result<BulkOp> RunHere(Client& c, int64_t id, bool quiet) {
  Client::BulkRunOptions ro;
  ro.only = id;
  ro.progress = [quiet](const BulkOp& op) {
    if (!quiet && op.state == BulkState::kRunning) {
      std::cerr << "operation " << op.id << ": " << op.done << "/" << op.total << "\n";
    }
  };
  const std::string owner = Owner();
  while (true) {
    auto ran = c.BulkRun(owner, ro);
    // kAborted: another runner took it over (this one was too slow).
    if (!ran.has_value() && ran.error().code() != StatusCode::kAborted) return ran.error();
    if (ran.has_value() && *ran && (*ran)->state == BulkState::kDone) return **ran;
    WARDEN_ASSIGN_OR_RETURN(BulkOp op, c.BulkGet(id));
    if (op.state == BulkState::kDone) return op;
    // Another runner (a `warden serve`) has it: follow its progress; take
    // it over should that runner go silent past its lease.
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
}

}  // namespace

Action RunBulkCommand(Globals& g, BulkAction action, const std::shared_ptr<FilterOptions>& filter,
                      bool dry_run, bool all, RetryOptions retry) {
  JobFilter f;
  Status parsed = filter->Read(&f);
  if (parsed.ok() && !filter->Any() && !all) {
    parsed = InvalidArgument(std::string("jobs ") + BulkActionName(action) +
                             " without a job id needs a filter (--state, --queue, ...) or "
                             "--all");
  }
  if (parsed.ok()) parsed = BulkScope(action, f).status();
  if (!parsed.ok()) return [parsed] { return Fail(parsed); };
  return WithClient(g, [=, &g](Client& c) -> Status {
    if (dry_run) {
      WARDEN_ASSIGN_OR_RETURN(int64_t n, c.BulkCount(action, f));
      if (g.json) {
        PrintJson({{"action", BulkActionName(action)},
                   {"dry_run", true},
                   {"filter", JobFilterToJson(f)},
                   {"count", n}});
      } else {
        std::cout << "would " << BulkActionName(action) << " " << n << " job"
                  << (n == 1 ? "" : "s") << " (dry run: nothing changed)\n";
      }
      return Status::Ok();
    }
    WARDEN_ASSIGN_OR_RETURN(BulkOp op, c.BulkStart(action, f, retry));
    WARDEN_ASSIGN_OR_RETURN(op, RunHere(c, op.id, g.json));
    if (g.json) {
      PrintJson(BulkOpToJson(op));
    } else {
      PrintOp(op);
    }
    return Status::Ok();
  });
}

void AddBulkCommands(CLI::App* jobs, Globals& g, Action* action) {
  auto id = std::make_shared<std::string>();
  auto limit = std::make_shared<int>(20);
  auto resume = std::make_shared<bool>(false);
  CLI::App* bulk = jobs->add_subcommand(
      "bulk", "bulk operations: list them, show one, or --resume unfinished ones here");
  bulk->add_option("id", *id, "operation id");
  bulk->add_option("--limit", *limit, "at most this many, newest first")
      ->check(CLI::Range(1, 1000));
  bulk->add_flag("--resume", *resume,
                 "run every unfinished operation whose runner is gone, in this process");
  bulk->callback([=, &g] {
    *action = WithClient(g, [=, &g](Client& c) -> Status {
      if (*resume) {
        Client::BulkRunOptions ro;
        const std::string owner = Owner();
        int ran = 0;
        while (true) {
          WARDEN_ASSIGN_OR_RETURN(std::optional<BulkOp> op, c.BulkRun(owner, ro));
          if (!op) break;
          ++ran;
          if (g.json) PrintJson(BulkOpToJson(*op));
          else PrintOp(*op);
        }
        if (!g.json && ran == 0) std::cout << "no unfinished operation to resume\n";
        return Status::Ok();
      }
      if (!id->empty()) {
        WARDEN_ASSIGN_OR_RETURN(int64_t oid, ParseId(*id));
        WARDEN_ASSIGN_OR_RETURN(BulkOp op, c.BulkGet(oid));
        if (g.json) PrintJson(BulkOpToJson(op));
        else PrintOp(op);
        return Status::Ok();
      }
      WARDEN_ASSIGN_OR_RETURN(auto ops, c.BulkList(*limit));
      if (g.json) {
        Json out = Json::array();
        for (const BulkOp& op : ops) out.push_back(BulkOpToJson(op));
        PrintJson(out);
      } else {
        if (ops.empty()) std::cout << "no bulk operations\n";
        for (const BulkOp& op : ops) PrintOp(op);
      }
      return Status::Ok();
    });
  });
}

}  // namespace warden::cli
