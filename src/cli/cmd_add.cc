// warden add TASK [PAYLOAD_JSON | -]   and   warden add --cmd 'COMMAND'
#include <iostream>
#include <iterator>

#include "cli/cli.h"
#include "core/duration.h"

namespace warden::cli {
namespace {

struct AddFlags {
  std::string task, payload, command, queue = "default", retry = "default";
  std::string delay, timeout, lease, start_deadline, unique_key, concurrency_key;
  int priority = 0;
  int max_attempts = 5;
  int max_crashes = 3;
  bool at_most_once = false;
};

Result<JobSpec> BuildSpec(const AddFlags& f) {
  JobSpec spec;
  if (f.task.empty() && f.command.empty()) {
    return InvalidArgument("give a TASK, or --cmd 'SHELL COMMAND'");
  }
  spec.task = f.task.empty() ? "command" : f.task;
  spec.command = f.command;
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
  if (!f.payload.empty()) {
    std::string text = f.payload;
    if (text == "-") text.assign(std::istreambuf_iterator<char>(std::cin), {});
    Json payload = Json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (payload.is_discarded()) {
      return InvalidArgument("the payload is not valid JSON: " + text.substr(0, 80));
    }
    spec.payload = std::move(payload);
  }
  if (!f.delay.empty()) { WARDEN_ASSIGN_OR_RETURN(spec.delay, Duration("--delay", f.delay)); }
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

}  // namespace

Result<Millis> Duration(const std::string& flag, const std::string& text) {
  auto d = ParseDuration(text);
  if (!d.has_value()) return d.error().Annotate(flag);
  return d;
}

void AddAddCommand(CLI::App& app, Globals& g, Action* action) {
  auto f = std::make_shared<AddFlags>();
  CLI::App* cmd = app.add_subcommand("add", "enqueue a job; prints its id");
  cmd->add_option("task", f->task, "task name (handled by a worker's --task or handler)");
  cmd->add_option("payload", f->payload, "payload JSON, or - to read it from stdin");
  cmd->add_option("--cmd", f->command, "run this shell command (workers need --allow-cmd)");
  cmd->add_option("--queue", f->queue, "queue (default: default)");
  cmd->add_option("--priority", f->priority, "higher runs first (default 0)");
  cmd->add_option("--delay", f->delay, "run no earlier than this from now (e.g. 30s)");
  cmd->add_option("--max-attempts", f->max_attempts, "charged attempts before dead (default 5)")
      ->check(CLI::Range(1, 1'000'000));
  cmd->add_option("--max-crashes", f->max_crashes,
                  "crashes/lost workers before quarantine (default 3)")
      ->check(CLI::Range(1, 1'000'000));
  cmd->add_option("--retry", f->retry, "none | default | forever");
  cmd->add_flag("--at-most-once", f->at_most_once,
                "never start it twice automatically (non-idempotent jobs)");
  cmd->add_option("--timeout", f->timeout, "stop it after this long (default 30m)");
  cmd->add_option("--lease", f->lease, "lease for this job (default: the worker's)");
  cmd->add_option("--unique-key", f->unique_key, "no-op while a live job has this key");
  cmd->add_option("--concurrency-key", f->concurrency_key, "one running job per key");
  cmd->add_option("--start-deadline", f->start_deadline,
                  "expire it if not started within this long");
  cmd->callback([f, &g, action] {
    *action = [f, &g] {
      auto spec = BuildSpec(*f);
      if (!spec.has_value()) return Fail(spec.error());
      auto client = OpenClient(g);
      if (!client.has_value()) return Fail(client.error());
      auto r = (*client)->Enqueue(*spec);
      if (!r.has_value()) return Fail(r.error());
      if (g.json) {
        PrintJson({{"id", r->id}, {"created", r->created}});
      } else {
        std::cout << r->id << (r->created ? "" : " (existing job with that unique key)")
                  << "\n";
      }
      return 0;
    };
  });
}

}  // namespace warden::cli
