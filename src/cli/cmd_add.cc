// warden add TASK [PAYLOAD_JSON | -]  and  warden add --cmd 'COMMAND' [TASK] [PAYLOAD_JSON | -]
// (and the flags of warden add --batch, whose run is in cmd_add_batch.cc)
#include <algorithm>
#include <iostream>
#include <iterator>
#include <optional>

#include "cli/add_batch.h"
#include "cli/cli.h"
#include "cli/render.h"
#include "cli/wait_job.h"
#include "warden/duration.h"
#include "warden/text.h"

namespace warden::cli {
namespace {

struct AddFlags {
  std::string task, payload, command, queue = "default", retry = "default";
  std::string delay, at, timeout, lease, start_deadline, unique_key, concurrency_key;
  std::string wait_timeout;
  bool wait = false;
  bool batch = false;
  bool require_worker = false;
  int priority = 0;
  int max_attempts = 5;
  int max_crashes = 3;
  bool at_most_once = false;
  // Set by AddAddSubcommand: tells `add t ''` (an empty payload, refused)
  // from `add t` (none: {}).
  const CLI::Option* payload_option = nullptr;
};

// For CLI11 integer options, which would read 010 as octal 8 and 0x10 as 16:
// decimal only, leading zeros dropped.
CLI::Validator Decimal() {
  auto op = [](std::string& text) -> std::string {
    const size_t sign = !text.empty() && (text[0] == '-' || text[0] == '+') ? 1 : 0;
    if (sign == text.size() || text.find_first_not_of("0123456789", sign) != std::string::npos) {
      return "'" + OneLine(text, 40) + "' is not a decimal integer";
    }
    const size_t first = std::min(text.find_first_not_of('0', sign), text.size() - 1);
    text.erase(sign, first - sign);
    return "";
  };
  return CLI::Validator(op, "");
}

Result<Json> ParsePayload(const std::string& text) {
  auto payload = ParseJsonText(text);
  if (!payload.has_value()) return InvalidArgument("the payload " + payload.error().message());
  return payload;
}

// A TASK argument that is `-` or starts like a JSON object or array: a
// payload given where the task name goes.
bool LooksLikePayload(const std::string& arg) {
  const size_t first = arg.find_first_not_of(" \t\r\n");
  return arg == "-" || (first != std::string::npos && (arg[first] == '{' || arg[first] == '['));
}

// The job `f`'s option flags describe, without its task, command and
// payload: what `add` builds on, and the defaults of `add --batch`.
Result<JobSpec> SpecFromOptionFlags(const AddFlags& f) {
  JobSpec spec;
  spec.queue = f.queue;
  spec.priority = f.priority;
  spec.max_attempts = f.max_attempts;
  spec.max_crashes = f.max_crashes;
  spec.unique_key = f.unique_key;
  spec.concurrency_key = f.concurrency_key;
  spec.delivery = f.at_most_once ? Delivery::kAtMostOnce : Delivery::kAtLeastOnce;
  auto retry = ParseRetryPolicy(f.retry);
  if (!retry) return InvalidArgument("--retry must be none, default or forever");
  spec.retry = *retry;
  if (!f.delay.empty()) { WARDEN_ASSIGN_OR_RETURN(spec.delay, Duration("--delay", f.delay)); }
  if (!f.at.empty()) {
    auto at = ParseTime(f.at);
    if (!at.has_value()) return at.error().Annotate("--at");
    spec.run_at = *at;
  }
  if (!f.timeout.empty()) {
    WARDEN_ASSIGN_OR_RETURN(spec.timeout, Duration("--timeout", f.timeout));
  }
  if (!f.lease.empty()) { WARDEN_ASSIGN_OR_RETURN(spec.lease, Duration("--lease", f.lease)); }
  if (!f.start_deadline.empty()) {
    WARDEN_ASSIGN_OR_RETURN(spec.start_deadline,
                            Duration("--start-deadline", f.start_deadline));
  }
  return spec;
}

Result<JobSpec> BuildSpec(const AddFlags& f, std::istream& in) {
  if (f.task.empty() && f.command.empty()) {
    return InvalidArgument("give a TASK, or --cmd 'SHELL COMMAND'");
  }
  // `add --cmd 'SHELL' [TASK] [PAYLOAD]`: a lone argument that is `-` or a
  // JSON object or array is the command's payload (its stdin), not its task.
  std::string task = f.task, payload_arg = f.payload;
  if (!f.command.empty() && payload_arg.empty() && LooksLikePayload(task)) {
    payload_arg = std::move(task);
    task.clear();
  }
  if (LooksLikePayload(task)) {
    return InvalidArgument("'" + OneLine(task, 40) +
                           "' is a payload, not a task name: give the task first (warden add "
                           "TASK PAYLOAD, or warden add --cmd 'SHELL' [TASK] [PAYLOAD])");
  }
  WARDEN_ASSIGN_OR_RETURN(JobSpec spec, SpecFromOptionFlags(f));
  spec.task = task.empty() ? "command" : task;
  spec.command = f.command;
  const bool payload_given = f.payload_option && f.payload_option->count() > 0;
  if (!payload_arg.empty() || payload_given) {
    std::string text = payload_arg;
    if (text == "-") text.assign(std::istreambuf_iterator<char>(in), {});
    WARDEN_ASSIGN_OR_RETURN(spec.payload, ParsePayload(text));
  }
  return spec;
}

// `add --batch [TASK] [--cmd 'SHELL'] [FLAGS]`: the defaults of its job
// lines. Its stdin is the jobs, so a payload argument has no place.
Result<JobSpec> BatchDefaults(const AddFlags& f) {
  const bool payload_given = f.payload_option && f.payload_option->count() > 0;
  if (payload_given || LooksLikePayload(f.task)) {
    return InvalidArgument("--batch reads its jobs from stdin, one JSON object a line: give "
                           "each payload as the \"payload\" of its line");
  }
  WARDEN_ASSIGN_OR_RETURN(JobSpec spec, SpecFromOptionFlags(f));
  spec.task = f.task;  // empty: each line names its task, or has a cmd
  spec.command = f.command;
  return spec;
}

// A mistyped year (2062 for 2026) would hold the job for decades, and `add`
// prints only its id: the same ceiling as for a --delay.
Status CheckAtLimit(const JobSpec& spec) {
  if (spec.run_at && *spec.run_at - NowMs() > kMaxDuration.count()) {
    return InvalidArgument("--at: " + FormatTime(*spec.run_at) +
                           " is more than 365d from now, the limit");
  }
  return Status::Ok();
}

CLI::App* AddAddSubcommand(CLI::App& app, AddFlags& f) {
  CLI::App* cmd = app.add_subcommand("add", "enqueue a job; prints its id");
  cmd->add_option("task", f.task,
                  "task name (handled by a worker's --task or handler); with --cmd, optional "
                  "(default: command), and a lone JSON object, array or - is the payload");
  f.payload_option =
      cmd->add_option("payload", f.payload, "payload JSON, or - to read it from stdin");
  cmd->add_option("--cmd", f.command, "run this shell command (workers need --allow-cmd)");
  cmd->add_option("--queue", f.queue, "queue (default: default)");
  cmd->add_option("--priority", f.priority, "higher runs first (default 0)")
      ->transform(Decimal());
  CLI::Option* delay =
      cmd->add_option("--delay", f.delay, "run no earlier than this from now (e.g. 30s, 1h30m)");
  cmd->add_option("--at", f.at,
                  "run no earlier than this time, RFC 3339 (2026-11-26T09:00:00Z, or with an "
                  "offset: +01:00); a past time runs now")
      ->excludes(delay);
  cmd->add_option("--max-attempts", f.max_attempts, "charged attempts before dead (default 5)")
      ->transform(Decimal())
      ->check(CLI::Range(1, 1'000'000));
  cmd->add_option("--max-crashes", f.max_crashes,
                  "crashes/lost workers before quarantine (default 3)")
      ->transform(Decimal())
      ->check(CLI::Range(1, 1'000'000));
  cmd->add_option("--retry", f.retry, "none | default | forever");
  cmd->add_flag("--at-most-once", f.at_most_once,
                "never start it twice automatically (non-idempotent jobs)");
  cmd->add_option("--timeout", f.timeout, "stop it after this long (default 30m)");
  cmd->add_option("--lease", f.lease, "lease for this job (default: the worker's)");
  cmd->add_option("--unique-key", f.unique_key, "no-op while a live job has this key");
  cmd->add_option("--concurrency-key", f.concurrency_key, "one running job per key");
  cmd->add_option("--start-deadline", f.start_deadline,
                  "expire it if not started within this long");
  CLI::Option* wait = cmd->add_flag(
      "--wait", f.wait,
      "then wait until it finishes and print what `warden wait ID` prints (exit 0 if it "
      "succeeded)");
  CLI::Option* wait_timeout =
      cmd->add_option("--wait-timeout", f.wait_timeout, "with --wait: give up after this long")
          ->needs(wait);
  cmd->add_flag("--require-worker", f.require_worker,
                "refuse (exit 1, nothing added) when no active worker runs the job's queue and "
                "task; without it, that is only noted on stderr");
  cmd->add_flag("--batch", f.batch,
                "enqueue the jobs on stdin, one JSON object a line ({\"task\": ..., "
                "\"payload\": ...}; fields as these flags, snake_case), in one go: any bad "
                "line and none is added; the flags given are the lines' defaults")
      ->excludes(wait)
      ->excludes(wait_timeout);
  return cmd;
}

}  // namespace

Result<Millis> Duration(const std::string& flag, const std::string& text) {
  auto d = ParseDuration(text);
  if (!d.has_value()) return d.error().Annotate(flag);
  return d;
}

Result<JobSpec> ParseAddArgs(const std::vector<std::string>& args, std::istream& in) {
  // The top-level flags main() declares, so that `add T --json` parses alike.
  CLI::App app{"warden"};
  app.require_subcommand(1);
  app.fallthrough();
  Globals g;
  app.add_option("--db", g.db);
  app.add_flag("--json", g.json);
  AddFlags f;
  AddAddSubcommand(app, f);
  std::vector<std::string> reversed(args.rbegin(), args.rend());  // as CLI11 wants
  reversed.push_back("add");
  try {
    app.parse(reversed);
  } catch (const CLI::CallForHelp&) {
    return InvalidArgument("help was asked for, not a job");
  } catch (const CLI::ParseError& e) {
    return InvalidArgument(OneLine(e.what(), 200));
  }
  return BuildSpec(f, in);
}

void AddAddCommand(CLI::App& app, Globals& g, Action* action) {
  auto f = std::make_shared<AddFlags>();
  CLI::App* cmd = AddAddSubcommand(app, *f);
  cmd->callback([f, &g, action] {
    *action = [f, &g] {
      if (f->batch) {
        auto defaults = BatchDefaults(*f);
        if (!defaults.has_value()) return Fail(defaults.error());
        if (auto s = CheckAtLimit(*defaults); !s.ok()) return Fail(s);
        return AddBatch(*defaults, g, std::cin, f->require_worker);
      }
      auto spec = BuildSpec(*f, std::cin);
      if (!spec.has_value()) return Fail(spec.error());
      Millis wait_limit = Millis::max();
      if (!f->wait_timeout.empty()) {
        auto d = Duration("--wait-timeout", f->wait_timeout);
        if (!d.has_value()) return Fail(d.error());
        wait_limit = *d;
      }
      if (auto s = CheckAtLimit(*spec); !s.ok()) return Fail(s);
      auto client = OpenClient(g);
      if (!client.has_value()) return Fail(client.error());
      std::optional<Result<bool>> served_before;
      if (f->require_worker) {
        served_before = (*client)->AnyWorkerRuns(*spec);
        if (!served_before->has_value()) return Fail(served_before->error());
        if (!**served_before) {
          return Fail(FailedPrecondition(NoWorkerRuns(*spec) + "; nothing was added"));
        }
      }
      auto r = (*client)->Enqueue(*spec);
      if (!r.has_value()) return Fail(r.error());
      // Asked once: before the commit with --require-worker (a worker that
      // stops afterwards leaves the job waiting), otherwise after it. Without
      // --require-worker, said, never refused: the job waits for its worker.
      Result<bool> served =
          served_before ? std::move(*served_before) : (*client)->AnyWorkerRuns(*spec);
      if (served.has_value() && !*served && r->created) {
        // Workers that would run it, but on a node that takes no work: the
        // fix is the node's, not a new worker (jobs why's node_disabled).
        std::string node_fix;
        if (auto why = (*client)->WhyNotRunning(r->id); why.has_value()) {
          for (const WhyReason& reason : *why) {
            if (reason.code == "node_disabled") node_fix = reason.message;
          }
        }
        if (!node_fix.empty()) {
          std::cerr << "warden: note: job " << r->id << " waits: " << node_fix << "\n";
        } else {
          std::cerr << "warden: note: no active worker runs job " << r->id << " yet; it waits "
                    << "until one does (" << WhoWouldRun(*spec) << ")\n";
        }
      }
      auto paused = (*client)->QueuePausedSince(spec->queue);
      if (paused.has_value() && paused->has_value() && r->created) {
        std::cerr << "warden: note: queue " << spec->queue << " is paused; job " << r->id
                  << " waits until `warden queues resume " << spec->queue << "`\n";
      }
      if (f->wait) {
        // stdout is the job's outcome, whose first line names it
        // ("job 42 succeeded"); --json, its document (with "id").
        if (!r->created) {
          std::cerr << "warden: job " << r->id << " already exists with that unique key; "
                    << "waiting for it\n";
        }
        return WaitForJob(**client, g, r->id, wait_limit, f->wait_timeout);
      }
      if (g.json) {
        PrintJson({{"id", r->id},
                   {"created", r->created},
                   {"served", served.has_value() ? Json(*served) : Json()}});
      } else {
        // stdout is the id alone, so that `id=$(warden add ...)` works.
        std::cout << r->id << "\n";
        if (!r->created) {
          std::cerr << "warden: job " << r->id << " already exists with that unique key; "
                    << "nothing was added\n";
        }
      }
      return 0;
    };
  });
}

}  // namespace warden::cli
