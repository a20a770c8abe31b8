// warden serve: the HTTP API, /metrics and health probes (src/server).
#include <iostream>

#include "cli/cli.h"
#include "server/serve.h"

namespace warden::cli {

void AddServeCommand(CLI::App& app, Globals& g, Action* action) {
  auto o = std::make_shared<server::ServeOptions>();
  auto drain = std::make_shared<std::string>("0s");
  auto timeout = std::make_shared<std::string>("10s");
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
      const Status s = server::Serve(
          options,
          [&](int port) {
            std::cerr << "warden: serving on " << options.listen.substr(0, options.listen.rfind(':'))
                      << ":" << port << (options.tls_cert.empty() ? " (http)" : " (https)")
                      << (options.no_auth ? ", without tokens (--no-auth)" : "") << std::endl;
          },
          [](const std::string& line) { std::cerr << "warden: " << line << std::endl; });
      return s.ok() ? 0 : Fail(s);
    };
  });
}

}  // namespace warden::cli
