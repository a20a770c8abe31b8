// The flags of `warden serve`, apart from serving: `warden config check`
// builds the server's options through the same flags and checks, from the
// environment and warden.toml (cli/config/settings.h).
#pragma once

#include <CLI/CLI.hpp>

#include <string>

#include "server/serve.h"
#include "warden/warden.h"

namespace warden::cli {

struct ServeFlags {
  server::ServeOptions options;  // the flags that set a field as they are
  std::string drain_grace = "0s", io_timeout = "10s", log_format = "text";
  std::string bulk_lease = "10s", bulk_pause = "0s";
};

// Declares the flags on `cmd` (the `serve` subcommand), bound to `f`.
void AddServeFlags(CLI::App* cmd, ServeFlags& f);

struct ServeSetup {
  server::ServeOptions options;  // without the database
  LogFormat log_format = LogFormat::kText;
};
// What the flags give, checked as far as can be without opening anything
// (server::CheckServeOptions); errors name the flag.
Result<ServeSetup> BuildServeSetup(const ServeFlags& f);

}  // namespace warden::cli
