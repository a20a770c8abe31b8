// warden serve: the HTTP API, /metrics and health probes (src/server).
#include <iostream>

#include "cli/cli.h"
#include "cli/log_out.h"
#include "cli/serve_flags.h"
#include "cli/service_notify.h"
#include "server/serve.h"
#include "warden/text.h"

namespace warden::cli {

void AddServeFlags(CLI::App* serve, ServeFlags& f) {
  server::ServeOptions& o = f.options;
  serve->add_option("--listen", o.listen, "ADDR:PORT to listen on (an IP address)")
      ->capture_default_str();
  serve->add_flag("--no-auth", o.no_auth,
                  "serve without tokens (refused on an address other than loopback)");
  serve->add_option("--allow-host", o.allowed_hosts,
                    "NAME[,NAME...]: answer requests to these host names too (IP addresses "
                    "and localhost always; any other name is refused: DNS rebinding)")
      ->delimiter(',');
  serve->add_flag("--allow-cmd-jobs", o.allow_command_jobs,
                  "let tokens with scope enqueue add command jobs (shell commands)");
  serve->add_option("--tls-cert", o.tls_cert, "PEM certificate chain: serve HTTPS");
  serve->add_option("--tls-key", o.tls_key, "PEM private key for --tls-cert");
  serve->add_option("--drain-grace", f.drain_grace,
                    "after SIGTERM, answer /readyz 503 this long before stopping")
      ->capture_default_str();
  serve->add_option("--max-connections", o.max_connections,
                    "open connections beyond this are answered 503 at once")
      ->capture_default_str()
      ->check(CLI::Range(1, 1'000'000));
  serve->add_option("--io-timeout", f.io_timeout,
                    "a client must send a request, or read a response, within this")
      ->capture_default_str();
  serve->add_flag("--access-log", o.access_log,
                  "log one line per response: client, method, path, status, time, token name");
  serve->add_option("--log-format", f.log_format,
                    "text | json: one JSON object a line on stderr (time, level, message)")
      ->capture_default_str();
  serve->add_flag_function(
      "--no-maintenance", [&o](int64_t) { o.maintenance = false; },
      "take no part in maintenance (by default this server proves the deaths of "
      "workers on its host, sweeps, and may lead maintenance; it claims no job)");
  serve->add_option("--maintenance-name", o.maintenance_name,
                    "the name of this server's maintenance row in `warden workers` "
                    "(default serve-HOST-PID)");
  serve->add_option("--bulk-batch", o.bulk_batch,
                    "bulk operations change this many jobs per transaction")
      ->check(CLI::Range(1, 100'000))
      ->capture_default_str();
  serve->add_option("--bulk-lease", f.bulk_lease,
                    "a bulk operation whose server went silent this long is taken over")
      ->capture_default_str();
  serve->add_option("--bulk-pause", f.bulk_pause,
                    "pause between two batches of a bulk operation (bounds its load)")
      ->capture_default_str();
}

Result<ServeSetup> BuildServeSetup(const ServeFlags& f) {
  ServeSetup setup;
  const auto format = ParseLogFormat(f.log_format);
  if (!format) {
    return InvalidArgument("--log-format must be text or json, not '" +
                           OneLine(f.log_format, 40) + "'");
  }
  setup.log_format = *format;
  server::ServeOptions& options = setup.options;
  options = f.options;
  WARDEN_ASSIGN_OR_RETURN(options.drain_grace, Duration("--drain-grace", f.drain_grace));
  WARDEN_ASSIGN_OR_RETURN(options.io_timeout, Duration("--io-timeout", f.io_timeout));
  WARDEN_ASSIGN_OR_RETURN(options.bulk_lease, Duration("--bulk-lease", f.bulk_lease));
  if (options.bulk_lease < std::chrono::seconds(1)) {
    return InvalidArgument("--bulk-lease must be at least 1s: a batch must fit in it");
  }
  WARDEN_ASSIGN_OR_RETURN(options.bulk_pause, Duration("--bulk-pause", f.bulk_pause));
  WARDEN_RETURN_IF_ERROR(server::CheckServeOptions(options));
  return setup;
}

namespace {

int RunServe(const Globals& g, const ServeFlags& f) {
  // The log's format first: an error about another flag is a line of it.
  if (const auto format = ParseLogFormat(f.log_format)) {
    SetLogFormat(*format, {{"component", "serve"}});
  }
  auto setup = BuildServeSetup(f);
  if (!setup.has_value()) return Fail(setup.error());
  server::ServeOptions options = setup->options;
  options.db = g.db;
  // The database must be there and current before the port opens, so
  // that a server that says it listens can answer.
  auto client = OpenClient(g, DbOpen::kCreateIfMissing);
  if (!client.has_value()) return Fail(client.error());
  client->reset();
  ServiceNotifier notifier;
  server::ServeHooks hooks;
  hooks.ready = [&](int port, std::function<Status()> live) {
    const std::string where = options.listen.substr(0, options.listen.rfind(':')) + ":" +
                              std::to_string(port) +
                              (options.tls_cert.empty() ? " (http)" : " (https)");
    LogOut(LogLevel::kInfo, "serving on " + where +
                                (options.no_auth ? ", without tokens (--no-auth)" : ""));
    notifier.Ready("serving on " + where);
    notifier.Start(std::move(live), [] { return std::string(); });
  };
  hooks.draining = [&] { notifier.Stopping("draining: finishing the requests in progress"); };
  hooks.log = [](LogLevel level, const std::string& line) { LogOut(level, line); };
  const Status s = server::Serve(options, hooks);
  notifier.Stop();
  return s.ok() ? 0 : Fail(s);
}

}  // namespace

void AddServeCommand(CLI::App& app, Globals& g, Action* action) {
  auto f = std::make_shared<ServeFlags>();
  CLI::App* serve = app.add_subcommand(
      "serve", "serve the HTTP API, /metrics and health probes (default 127.0.0.1:7878)");
  AddServeFlags(serve, *f);
  serve->callback([f, &g, action] { *action = [f, &g] { return RunServe(g, *f); }; });
}

}  // namespace warden::cli
