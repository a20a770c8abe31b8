// `warden serve`: the HTTP API, /metrics and the health probes in one
// process, over any store. Several may serve one database: each reads
// everything from it and keeps nothing of its own but connections.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "server/listen_addr.h"
#include "warden/log.h"
#include "warden/status.h"

namespace warden::server {

struct ServeOptions {
  std::string db;
  std::string listen = "127.0.0.1:7878";  // ADDR:PORT; [v6]:PORT
  bool no_auth = false;                   // refused off loopback
  bool allow_command_jobs = false;
  // Host names the server answers to besides IP addresses and localhost
  // (server/host_check.h): a reverse proxy's, this host's DNS name.
  std::vector<std::string> allowed_hosts;
  std::string tls_cert, tls_key;
  // After SIGTERM or SIGINT: /readyz answers 503 for this long (a load
  // balancer takes the server out), then requests in progress finish.
  std::chrono::milliseconds drain_grace{0};
  size_t max_body_bytes = 8 * 1024 * 1024;
  std::chrono::milliseconds io_timeout{10'000};
  int handler_threads = 4;
  // Open connections beyond this are answered 503 at once (ListenerOptions).
  int max_connections = 10'000;
  // Bulk operations (warden/bulk.h) this server runs: jobs per
  // transaction, the lease a runner holds an operation for (a killed
  // server's operation is taken over once it runs out), and a pause
  // between batches (bounds the load a large operation puts on the store).
  int bulk_batch = 1000;
  std::chrono::milliseconds bulk_lease{10'000};
  std::chrono::milliseconds bulk_pause{0};
  // One log line per response (--access-log): peer, method, path, status,
  // time taken and token name; never a token, a query or a body.
  bool access_log = false;
  // Take part in maintenance (server/maintenance_participant.h): prove the
  // deaths of workers on this host, sweep, lead when it falls to this
  // server; a worker row named `maintenance_name` (empty:
  // "serve-<host>-<pid>") that claims nothing. --no-maintenance: off.
  bool maintenance = true;
  std::string maintenance_name;
};

// What Serve checks of `options` before it opens anything: the address,
// --no-auth only on loopback, and the --allow-host names.
Status CheckServeOptions(const ServeOptions& options);

// What Serve tells its caller (each may be empty).
struct ServeHooks {
  // Once listening: the bound port, and a liveness check the caller may
  // call from any thread, every few seconds, until Serve returns (what
  // systemd's watchdog is fed by): Ok while the listener's I/O threads turn.
  // Handlers waiting on the database are not judged: an outage is no reason
  // to restart the server, and /readyz says it.
  std::function<void(int port, std::function<Status()> live)> ready;
  // SIGTERM or SIGINT came: the drain begins (/readyz answers 503).
  std::function<void()> draining;
  std::function<void(LogLevel level, const std::string& line)> log;
};

// Serves until SIGTERM or SIGINT. Errors before serving (a bad flag, a port
// in use, the database) are returned; a served run that ends on a signal is
// Ok.
Status Serve(const ServeOptions& options, const ServeHooks& hooks);

}  // namespace warden::server
