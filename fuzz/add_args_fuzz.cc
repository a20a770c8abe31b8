// The command line of `warden add`: the input split on NUL bytes is stdin
// (first piece, read for a payload of `-`) and then the arguments after
// "add". Checks: nothing throws; a refusal is one InvalidArgument line; an
// accepted JobSpec is well formed, then either passes the Client's
// ValidateSpec or is refused by it with one InvalidArgument line; and a
// valid spec, written back as flags, parses to the same spec.
#include <sstream>

#include "cli/cli.h"
#include "warden/duration.h"
#include "fuzz_check.h"

namespace warden::fuzz {
namespace {

std::string Describe(const std::vector<std::string>& args) {
  std::string out = "warden add";
  for (const std::string& a : args) out += " '" + a + "'";
  return out;
}

// `spec` as `warden add` flags, in a form no flag parser can misread.
std::vector<std::string> AsArgs(const JobSpec& s) {
  std::vector<std::string> args = {
      "--queue=" + s.queue,
      "--priority=" + std::to_string(s.priority),
      "--max-attempts=" + std::to_string(s.max_attempts),
      "--max-crashes=" + std::to_string(s.max_crashes),
      std::string("--retry=") + RetryPolicyName(s.retry),
      "--timeout=" + FormatDuration(s.timeout),
      // --at and --delay exclude each other, even --delay=0ms.
      s.run_at ? "--at=" + FormatTime(*s.run_at) : "--delay=" + FormatDuration(s.delay)};
  if (s.delivery == Delivery::kAtMostOnce) args.push_back("--at-most-once");
  if (s.lease) args.push_back("--lease=" + FormatDuration(*s.lease));
  if (s.start_deadline) args.push_back("--start-deadline=" + FormatDuration(*s.start_deadline));
  if (!s.unique_key.empty()) args.push_back("--unique-key=" + s.unique_key);
  if (!s.concurrency_key.empty()) args.push_back("--concurrency-key=" + s.concurrency_key);
  if (!s.command.empty()) args.push_back("--cmd=" + s.command);
  args.insert(args.end(), {"--", s.task, s.payload.dump()});
  return args;
}

bool Same(const JobSpec& a, const JobSpec& b) {
  return a.queue == b.queue && a.task == b.task && a.payload == b.payload &&
         a.command == b.command && a.priority == b.priority && a.delay == b.delay &&
         a.max_attempts == b.max_attempts && a.retry == b.retry && a.delivery == b.delivery &&
         a.timeout == b.timeout && a.lease == b.lease && a.start_deadline == b.start_deadline &&
         a.unique_key == b.unique_key && a.concurrency_key == b.concurrency_key &&
         a.max_crashes == b.max_crashes && a.run_at == b.run_at;
}

}  // namespace
}  // namespace warden::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace warden;
  using namespace warden::fuzz;
  std::vector<std::string> args = SplitOnNul(data, size);
  if (args.size() > 64) return -1;  // not a useful input; keep the corpus small
  std::istringstream in(args.front());
  args.erase(args.begin());
  const std::string what = Describe(args);

  const Result<JobSpec> spec = cli::ParseAddArgs(args, in);
  if (!spec.has_value()) {
    CheckRefusal(spec.error());
    return 0;
  }
  FUZZ_CHECK(!spec->task.empty(), what);
  FUZZ_CHECK(spec->max_attempts >= 1 && spec->max_attempts <= 1'000'000, what);
  FUZZ_CHECK(spec->max_crashes >= 1 && spec->max_crashes <= 1'000'000, what);
  FUZZ_CHECK(spec->delay.count() >= 0 && spec->timeout.count() >= 0, what);
  FUZZ_CHECK(Depth(spec->payload) <= 512, what);

  const Status valid = ValidateSpec(*spec);
  if (!valid.ok()) {
    CheckRefusal(valid);
    return 0;
  }
  std::istringstream unused;
  const std::vector<std::string> again = AsArgs(*spec);
  const Result<JobSpec> reparsed = cli::ParseAddArgs(again, unused);
  FUZZ_CHECK(reparsed.has_value(), what + " -> " + Describe(again) + ": " +
                                       reparsed.status().ToString());
  FUZZ_CHECK(Same(*spec, *reparsed), what + " -> " + Describe(again));
  return 0;
}
