#include "server/worker_endpoint.h"

#include "server/serve.h"

namespace warden::server {
namespace {

Response Text(int status, std::string body) {
  Response r;
  r.status = status;
  r.content_type = "text/plain; charset=utf-8";
  r.body = std::move(body);
  return r;
}

Response Handle(const Request& req, Worker& worker, bool metrics, bool health) {
  const bool known = (metrics && req.path == "/metrics") ||
                     (health && (req.path == "/healthz" || req.path == "/readyz"));
  if (!known) return Text(404, "not found\n");
  if (req.method != "GET" && req.method != "HEAD") {
    Response r = Text(405, "only GET\n");
    r.headers.emplace_back("Allow", "GET, HEAD");
    return r;
  }
  if (req.path == "/metrics") {
    Response r = Text(200, worker.ExportMetrics());
    r.content_type = "text/plain; version=0.0.4; charset=utf-8";
    return r;
  }
  if (req.path == "/healthz") {
    const Status live = worker.Live();
    return live.ok() ? Text(200, "ok\n") : Text(503, live.message() + "\n");
  }
  const Status ready = worker.Ready();
  return ready.ok() ? Text(200, "ready\n") : Text(503, ready.message() + "\n");
}

Result<std::unique_ptr<Listener>> StartOne(const char* flag, const std::string& listen,
                                           bool metrics, bool health, Worker& worker,
                                           LogLine log) {
  ListenerOptions lo;
  WARDEN_RETURN_IF_ERROR(ParseListen(listen, &lo.host, &lo.port, flag));
  lo.io_threads = 1;
  lo.handler_threads = 1;
  lo.max_body_bytes = 1024;
  WARDEN_ASSIGN_OR_RETURN(auto listener,
                          Listener::Start(
                              lo,
                              [&worker, metrics, health](const Request& req) {
                                return Handle(req, worker, metrics, health);
                              },
                              log));
  const std::string what = metrics && health ? "/metrics, /healthz and /readyz"
                           : metrics         ? "/metrics"
                                             : "/healthz and /readyz";
  const bool v6 = lo.host.find(':') != std::string::npos;
  log("serving " + what + " on " + (v6 ? "[" + lo.host + "]" : lo.host) + ":" +
      std::to_string(listener->port()));
  return listener;
}

}  // namespace

Result<std::vector<std::unique_ptr<Listener>>> StartWorkerEndpoints(
    const std::string& metrics_listen, const std::string& health_listen, Worker& worker,
    LogLine log) {
  std::vector<std::unique_ptr<Listener>> out;
  // One address for both: one listener (port 0 asks for two free ports).
  const bool any_port = metrics_listen.ends_with(":0");
  if (!metrics_listen.empty() && metrics_listen == health_listen && !any_port) {
    WARDEN_ASSIGN_OR_RETURN(auto l,
                            StartOne("--metrics-listen", metrics_listen, true, true, worker, log));
    out.push_back(std::move(l));
    return out;
  }
  if (!metrics_listen.empty()) {
    auto l = StartOne("--metrics-listen", metrics_listen, true, false, worker, log);
    if (!l.has_value()) return l.error();
    out.push_back(std::move(*l));
  }
  if (!health_listen.empty()) {
    auto l = StartOne("--health-listen", health_listen, false, true, worker, log);
    if (!l.has_value()) return l.error();
    out.push_back(std::move(*l));
  }
  return out;
}

}  // namespace warden::server
