// The command line of `warden add`: the input split on NUL bytes is stdin
// (first piece, read for a payload of `-`) and then the arguments after
// "add". Checks: nothing throws; a refusal is one InvalidArgument line; an
// accepted JobSpec is well formed, then either passes the Client's
// ValidateSpec or is refused by it with one InvalidArgument line; and a
// valid spec, written back as flags, parses to the same spec.
#include <sstream>

#include "cli/cli.h"
#include "fuzz_check.h"
#include "spec_forms.h"

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
