// warden serve: the HTTP API, /metrics and health probes (src/server).
#include <iostream>

#include "cli/cli.h"
#include "cli/log_out.h"
#include "cli/service_notify.h"
#include "server/serve.h"
#include "warden/text.h"

namespace warden::cli {

void AddServeCommand(CLI::App& app, Globals& g, Action* action) {
  auto o = std::make_shared<server::ServeOptions>();
  auto drain = std::make_shared<std::string>("0s");
  auto timeout = std::make_shared<std::string>("10s");
  auto log_format = std::make_shared<std::string>("text");
  CLI::App* serve = app.add_subcommand(
      "serve", "serve the HTTP API, /metrics and health probes (default 127.0.0.1:7878)");
  serve->add_option("--listen", o->listen, "ADDR:PORT to listen on (an IP address)")
      ->capture_default_str();
  serve->add_flag("--no-auth", o->no_auth,
                  "serve without tokens (refused on an address other than loopback)");
  serve->add_flag("--allow-cmd-jobs", o->allow_command_jobs,
                  "let tokens with scope enqueue add command jobs (shell commands)");
  serve->add_option("--tls-cert", o->tls_cert, "PEM certificate chain: serve HTTPS");
  serve->add_option("--tls-key", o->tls_key, "PEM private key for --tls-cert");
  serve->add_option("--drain-grace", *drain,
                    "after SIGTERM, answer /readyz 503 this long before stopping")
      ->capture_default_str();
  serve->add_option("--max-connections", o->max_connections,
                    "open connections beyond this are answered 503 at once")
      ->capture_default_str()
      ->check(CLI::Range(1, 1'000'000));
  serve->add_option("--io-timeout", *timeout,
                    "a client must send a request, or read a response, within this")
      ->capture_default_str();
  serve->add_option("--log-format", *log_format,
                    "text | json: one JSON object a line on stderr (time, level, message)")
      ->capture_default_str();
  auto bulk_lease = std::make_shared<std::string>("10s");
  auto bulk_pause = std::make_shared<std::string>("0s");
  serve->add_option("--bulk-batch", o->bulk_batch,
                    "bulk operations change this many jobs per transaction")
      ->check(CLI::Range(1, 100'000))
      ->capture_default_str();
  serve->add_option("--bulk-lease", *bulk_lease,
                    "a bulk operation whose server went silent this long is taken over")
      ->capture_default_str();
  serve->add_option("--bulk-pause", *bulk_pause,
                    "pause between two batches of a bulk operation (bounds its load)")
      ->capture_default_str();
  serve->callback([=, &g] {
    *action = [=, &g]() -> int {
      const auto format = ParseLogFormat(*log_format);
      if (!format) {
        return Fail(InvalidArgument("--log-format must be text or json, not '" +
                                    OneLine(*log_format, 40) + "'"));
      }
      SetLogFormat(*format, {{"component", "serve"}});
      auto grace = Duration("--drain-grace", *drain);
      if (!grace.has_value()) return Fail(grace.error());
      auto io = Duration("--io-timeout", *timeout);
      if (!io.has_value()) return Fail(io.error());
      auto lease = Duration("--bulk-lease", *bulk_lease);
      if (!lease.has_value()) return Fail(lease.error());
      if (*lease < std::chrono::seconds(1)) {
        return Fail(InvalidArgument("--bulk-lease must be at least 1s: a batch must fit in it"));
      }
      auto pause = Duration("--bulk-pause", *bulk_pause);
      if (!pause.has_value()) return Fail(pause.error());
      server::ServeOptions options = *o;
      options.bulk_lease = *lease;
      options.bulk_pause = *pause;
      options.db = g.db;
      options.drain_grace = *grace;
      options.io_timeout = *io;
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
    };
  });
}

}  // namespace warden::cli
