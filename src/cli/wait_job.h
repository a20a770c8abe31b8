// Waiting for one job to finish: `warden wait ID` and `warden add --wait`.
#pragma once

#include <string>

#include "cli/cli.h"

namespace warden::cli {

// Polls job `id` until it is finished (succeeded, dead, cancelled or
// expired) or `limit` passes (Millis::max(): no limit; `limit_text` is how
// the user wrote it, for the message), then prints it: text, "job ID STATE"
// and then its result (succeeded) or its last error (otherwise); --json,
// the document `jobs show --json` prints. Returns the exit status: 0 when
// it succeeded, 1 when it ended otherwise (with a line on stderr), or
// Fail's (not found; DeadlineExceeded on the limit, the job left as it is).
int WaitForJob(Client& client, const Globals& g, JobId id, Millis limit,
               const std::string& limit_text);

}  // namespace warden::cli
