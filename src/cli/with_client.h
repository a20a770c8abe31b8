// Helpers the subcommands share: run a body with an open client, parse a
// job id.
#pragma once

#include <charconv>
#include <memory>
#include <string>

#include "cli/cli.h"
#include "warden/text.h"

namespace warden::cli {

// Runs `body` with an open client; maps its Status to the exit code.
template <typename Body>
Action WithClient(Globals& g, Body body, DbOpen how = DbOpen::kExisting) {
  return [&g, body, how] {
    auto client = OpenClient(g, how);
    if (!client.has_value()) return Fail(client.error());
    Status s = body(**client);
    return s.ok() ? 0 : Fail(s);
  };
}

inline Result<JobId> ParseId(const std::string& text) {
  JobId id = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), id);
  if (ec != std::errc() || ptr != text.data() + text.size() || id <= 0) {
    return InvalidArgument("'" + OneLine(text, 40) + "' is not a job id");
  }
  return id;
}

// WithClient for a command on one job: a bad id is a usage error (exit 2)
// before the database is opened.
template <typename Body>
Action WithJobId(Globals& g, const std::shared_ptr<std::string>& id, Body body) {
  return [&g, id, body] {
    auto jid = ParseId(*id);
    if (!jid.has_value()) return Fail(jid.error());
    return WithClient(g, [&](Client& c) { return body(c, *jid); })();
  };
}

}  // namespace warden::cli
