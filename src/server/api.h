// The HTTP API v1, the health probes and /metrics over warden's public API
// (docs/http-api.md). Every request but the probes needs a token whose
// scope covers the route, unless the server runs with --no-auth (refused
// off loopback by Serve). A request that changes something must not come
// from another site's page: see CrossSiteRefusal.
#pragma once

#include <atomic>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "server/client_pool.h"
#include "server/events.h"
#include "server/http_types.h"
#include "server/log_limit.h"
#include "server/stats_history.h"

namespace warden::server {

struct ApiOptions {
  bool no_auth = false;
  // POST /v1/jobs may enqueue command jobs (`cmd`) only when set: a token
  // that may enqueue could otherwise run any shell command on the workers.
  bool allow_command_jobs = false;
  // Called when a bulk operation was started: wakes this server's runner.
  std::function<void()> bulk_started;
  // What GET /v1/events streams from (none: the route answers 404).
  EventHub* events = nullptr;
  // The names besides IP addresses and localhost that a request's Host may
  // give (server/host_check.h: DNS rebinding).
  std::vector<std::string> allowed_hosts;
  // Served over TLS: a browser's Origin for this server says https.
  bool tls = false;
  // Where refusals any client can cause are told (a failed authentication,
  // a cross-site or wrong-Host request): one line each, one a second at
  // most of each kind. Never holds a token.
  std::function<void(const std::string&)> log_refusal;
};

class Api {
 public:
  Api(ApiOptions options, ClientPool& clients) : options_(options), clients_(clients) {}
  Response Handle(const Request& req);
  // /healthz, answered on the listener's I/O thread (ListenerHooks::
  // answer_now): without a handler thread or the store, so that it answers
  // while every handler is busy. nullopt for any other request. Never
  // blocks.
  std::optional<Response> AnswerNow(const Request& req) const;
  // What Handle would refuse a request for before its route, from its head
  // alone (ListenerHooks::admit): a wrong Host, a cross-site request, no
  // valid token. nullopt lets its body be read.
  std::optional<Response> Admit(const Request& head);
  // /readyz answers 503 from now on (a server being stopped).
  void SetDraining() { draining_ = true; }

  // Who is calling: a token's name and scope.
  struct Caller {
    std::string actor;
    Scope scope = Scope::kRead;
  };

 private:
  Response Route(const Request& req, Client& c, const Caller& caller);
  // What needs neither the store nor a token: the Host check, the probes'
  // 405, /healthz, /openapi.json and the dashboard's files.
  std::optional<Response> Open(const Request& req) const;
  // The cross-site check and the token: a refusal, or nullopt and the caller.
  std::optional<Response> Gate(const Request& req, Client& c, Caller* caller);
  void LogRefusal(LogLimit& limit, const Request& req, const Response& r,
                  const std::string& why);
  Response Metrics(Client& c);

  ApiOptions options_;
  ClientPool& clients_;
  std::atomic<bool> draining_{false};
  LogLimit auth_failures_, cross_site_;
  // The overview's chart samples (GET /v1/stats/history).
  StatsHistory stats_history_;
};

// {"error": {"code", "message"}} with its HTTP status.
Response ErrorResponse(int status, const std::string& code, const std::string& message);
// A Status from the library as its HTTP error (messages redacted of
// database passwords).
Response ErrorResponse(const Status& s);
Response JsonResponse(const Json& body, int status = 200);

// Why a state-changing request is refused as cross-site (a page of another
// origin posting a form or a fetch to this server), or "" to let it pass:
// its Origin is not this server's (scheme and Host: the Host itself was
// checked first, server/host_check.h), or Sec-Fetch-Site says cross-site.
std::string CrossSiteRefusal(const Request& req, bool tls);
// What to send instead of a state-changing request's body that is not
// declared application/json (or application/x-ndjson), or "" to let it
// pass. The second line of the same defence (a page of another site can
// post a form, or a fetch without a preflight, only with another type or
// none), answered 415 since a request of this site gets it too: a script
// or curl that left the header out.
std::string MediaTypeRefusal(const Request& req);

}  // namespace warden::server
