// The job lines of `warden add --batch` (and the job objects of the HTTP
// API's batch): the input is newline-delimited JSON, read through
// JobLineReader (include/warden/job_json.h) to its end or its first error.
// Checks: nothing throws; a refusal is one InvalidArgument line of at most
// 300 bytes that starts "line N: " with N a line of the input after the
// last one accepted; the lines accepted are numbered in order, and the
// reader counts every line of the input; an accepted spec passes
// ValidateSpec; and it is the same spec when written back as a job object
// (every field given) and, where a command line can say it, as `warden add`
// flags (parity of --batch and add); refused with `cmd` when commands are
// not allowed, and otherwise read alike.
#include <sstream>

#include "cli/cli.h"
#include "fuzz_check.h"
#include "spec_forms.h"
#include "warden/job_json.h"
#include "warden/text.h"

namespace warden::fuzz {
namespace {

// Lines as the reader counts them: each '\n' ends one, and text after the
// last one is one more.
int64_t LinesIn(const std::string& text) {
  const auto breaks = static_cast<int64_t>(std::count(text.begin(), text.end(), '\n'));
  return breaks + (!text.empty() && text.back() != '\n' ? 1 : 0);
}

// A task `warden add` takes for a payload where the task goes (cmd_add.cc):
// a batch line may name it, a command line cannot.
bool LooksLikePayload(const std::string& task) {
  const size_t first = task.find_first_not_of(" \t\r\n");
  return task == "-" || (first != std::string::npos && (task[first] == '{' || task[first] == '['));
}

void CheckAccepted(const JobLine& line) {
  const std::string what = "line " + std::to_string(line.number) + ": " + line.text;
  FUZZ_CHECK(line.text.find('\n') == std::string::npos, what);
  const Status valid = ValidateSpec(line.spec);
  FUZZ_CHECK(valid.ok(), what + " / " + valid.ToString());
  FUZZ_CHECK(Depth(line.spec.payload) < kMaxJsonDepth, what);

  // Written back as a job object, every field given.
  const std::string object = JsonText(AsJobObject(line.spec));
  const Result<JobSpec> again = JobSpecFromJsonText(object);
  FUZZ_CHECK(again.has_value(), what + " -> " + object + ": " + again.status().ToString());
  FUZZ_CHECK(Same(line.spec, *again), what + " -> " + object);

  // Commands not allowed: refused exactly when the line has a cmd.
  const Json parsed = ParseJsonText(line.text).value();
  const bool has_cmd = parsed.contains("cmd") && !parsed["cmd"].is_null();
  JobJsonOptions no_commands;
  no_commands.allow_commands = false;
  const Result<JobSpec> without = JobSpecFromJsonText(line.text, no_commands);
  FUZZ_CHECK(without.has_value() == !has_cmd, what);
  if (without.has_value()) FUZZ_CHECK(Same(line.spec, *without), what);
  if (!without.has_value()) CheckRefusal(without.error());

  // As `warden add` flags: the same job.
  if (LooksLikePayload(line.spec.task)) return;
  const std::vector<std::string> args = AsArgs(line.spec);
  std::istringstream unused;
  const Result<JobSpec> flags = cli::ParseAddArgs(args, unused);
  FUZZ_CHECK(flags.has_value(), what + " -> " + Describe(args) + ": " + flags.status().ToString());
  FUZZ_CHECK(Same(line.spec, *flags), what + " -> " + Describe(args));
}

}  // namespace
}  // namespace warden::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace warden;
  using namespace warden::fuzz;
  const std::string text(reinterpret_cast<const char*>(data), size);
  const int64_t lines = LinesIn(text);
  std::istringstream in(text);
  JobLineReader reader(in, {});
  int64_t last = 0;
  while (true) {
    Result<std::optional<JobLine>> next = reader.Next();
    if (!next.has_value()) {
      CheckRefusal(next.error());
      const std::string& message = next.error().message();
      const int64_t n =
          std::strtoll(message.c_str() + std::min<size_t>(5, message.size()), nullptr, 10);
      FUZZ_CHECK(message.rfind("line " + std::to_string(n) + ": ", 0) == 0, message);
      FUZZ_CHECK(n > last && n <= lines, message);
      return 0;
    }
    if (!*next) break;
    const JobLine& line = **next;
    FUZZ_CHECK(line.number > last && line.number <= lines, line.text);
    last = line.number;
    CheckAccepted(line);
  }
  FUZZ_CHECK(reader.lines_read() == lines, text);
  return 0;
}
