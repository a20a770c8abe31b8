// The API's front door: probes, authentication, cross-site refusal, and
// errors as JSON. The routes themselves are in api_routes.cc.
#include "server/api.h"

#include <cctype>

#include "server/dashboard.h"
#include "server/host_check.h"
#include "server/openapi.h"
#include "warden/db_url.h"
#include "warden/text.h"

namespace warden::server {

Response JsonResponse(const Json& body, int status) {
  Response r;
  r.status = status;
  r.body = body.dump(-1, ' ', false, Json::error_handler_t::replace);
  return r;
}

Response ErrorResponse(int status, const std::string& code, const std::string& message) {
  return JsonResponse({{"error", {{"code", code}, {"message", RedactDbUrlsIn(message)}}}},
                      status);
}

Response ErrorResponse(const Status& s) {
  switch (s.code()) {
    case StatusCode::kInvalidArgument:
      return ErrorResponse(400, "invalid_argument", s.message());
    case StatusCode::kNotFound:
      return ErrorResponse(404, "not_found", s.message());
    case StatusCode::kFailedPrecondition:
      return ErrorResponse(409, "failed_precondition", s.message());
    case StatusCode::kAborted:
      return ErrorResponse(409, "aborted", s.message());
    case StatusCode::kUnavailable:
      return ErrorResponse(503, "unavailable", s.message());
    case StatusCode::kDeadlineExceeded:
      return ErrorResponse(504, "deadline_exceeded", s.message());
    default:
      return ErrorResponse(500, "internal", s.message());
  }
}

namespace {

bool ChangesState(const std::string& method) {
  return method != "GET" && method != "HEAD" && method != "OPTIONS";
}

std::string Lower(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

// "application/JSON; charset=utf-8" -> "application/json".
std::string MediaType(const std::string& content_type) {
  std::string type = Lower(content_type.substr(0, content_type.find(';')));
  while (!type.empty() && (type.back() == ' ' || type.back() == '\t')) type.pop_back();
  return type;
}

}  // namespace

std::string CrossSiteRefusal(const Request& req, bool tls) {
  if (!ChangesState(req.method)) return "";
  const std::string site = req.Header("sec-fetch-site");
  if (!site.empty() && site != "same-origin" && site != "none") {
    return "a " + req.method + " from another site's page (Sec-Fetch-Site: " + OneLine(site, 30) +
           ")";
  }
  const std::string origin = req.Header("origin");
  const std::string self = std::string(tls ? "https://" : "http://") + req.Header("host");
  if (!origin.empty() && Lower(origin) != Lower(self)) {
    return "a " + req.method + " from another origin (" + OneLine(origin, 60) + ", not " +
           OneLine(self, 60) + ")";
  }
  return "";
}

std::string MediaTypeRefusal(const Request& req) {
  if (!ChangesState(req.method) || (req.body.empty() && !req.declares_body)) return "";
  const std::string type = MediaType(req.Header("content-type"));
  if (type == "application/json" || type == "application/x-ndjson") return "";
  return "send the request body as Content-Type: application/json (this request's " +
         (type.empty() ? std::string("had none") : "was " + OneLine(type, 60)) + ")";
}

std::optional<Response> Api::Open(const Request& req) const {
  // Before anything else: a page whose name was made to point here reads
  // nothing, not even the dashboard.
  if (Status host = CheckHost(req.Header("host"), options_.allowed_hosts); !host.ok()) {
    if (host.code() == StatusCode::kInvalidArgument) {
      return ErrorResponse(400, "bad_request", host.message());
    }
    return ErrorResponse(403, "host_not_allowed", host.message());
  }
  // The routes that answer anyone take GET alone, and say so to anyone
  // (405, not the 401 or 404 of a route behind the token).
  if ((req.path == "/healthz" || req.path == "/readyz" || req.path == "/openapi.json") &&
      req.method != "GET") {
    Response r = ErrorResponse(405, "method_not_allowed", "this route takes GET");
    r.headers.emplace_back("Allow", "GET");
    return r;
  }
  // The probes answer anyone: a load balancer or kubelet has no token.
  if (req.path == "/healthz" && req.method == "GET") {
    return JsonResponse({{"status", "ok"}});
  }
  // The API's description is no secret. Its server is the one asked: the
  // Host was checked above, so it is a name this server answers to.
  if (req.path == "/openapi.json" && req.method == "GET") {
    static const Json doc = Json::parse(kOpenApiJson);
    Json answered = doc;
    answered["servers"] =
        Json::array({{{"url", (options_.tls ? "https://" : "http://") + req.Header("host")}}});
    return JsonResponse(answered);
  }
  // The dashboard's static files: no token, no database (server/dashboard.h).
  return DashboardResponse(req);
}

std::optional<Response> Api::AnswerNow(const Request& req) const {
  if (req.path != "/healthz") return std::nullopt;
  return Open(req);
}

void Api::LogRefusal(LogLimit& limit, const Request& req, const Response& r,
                     const std::string& why) {
  if (!options_.log_refusal) return;
  const std::optional<std::string> more = limit.Allow();
  if (!more) return;
  // The path without its query, the peer and why: never a header's value
  // but Origin's and Host's (a token is in neither).
  options_.log_refusal("refused " + OneLine(req.method, 16) + " " +
                       OneLine(req.raw_path, 120) + " from " + req.peer + ": " +
                       std::to_string(r.status) + ", " + why + *more);
}

std::optional<Response> Api::Gate(const Request& req, Client& c, Caller* caller) {
  if (const std::string refusal = CrossSiteRefusal(req, options_.tls); !refusal.empty()) {
    Response r = ErrorResponse(403, "cross_site", refusal + " is refused");
    LogRefusal(cross_site_, req, r, "cross-site: " + refusal);
    return r;
  }
  if (const std::string refusal = MediaTypeRefusal(req); !refusal.empty()) {
    Response r = ErrorResponse(415, "unsupported_media_type", refusal);
    r.headers.emplace_back("Accept", "application/json");
    LogRefusal(cross_site_, req, r, "media type: " + refusal);
    return r;
  }
  *caller = Caller{"no-auth", Scope::kAdmin};
  if (options_.no_auth) return std::nullopt;
  const std::string auth = req.Header("authorization");
  // The scheme's name is case-insensitive (RFC 9110 §11.1).
  constexpr std::string_view kBearer = "bearer ";
  if (auth.size() <= kBearer.size() || Lower(auth.substr(0, kBearer.size())) != kBearer) {
    Response r = ErrorResponse(401, "unauthorized",
                               "send a token: Authorization: Bearer TOKEN (warden tokens "
                               "create NAME makes one)");
    r.headers.emplace_back("WWW-Authenticate", "Bearer");
    LogRefusal(auth_failures_, req, r,
               auth.empty() ? "no Authorization header"
                            : "an Authorization that is no Bearer token");
    return r;
  }
  auto token = c.Authenticate(auth.substr(kBearer.size()));
  if (!token.has_value()) {
    if (token.error().code() != StatusCode::kNotFound) return ErrorResponse(token.error());
    // Authenticate's message: never the token, and "expired" only to the
    // holder of an expired token's secret.
    const std::string& why = token.error().message();
    const bool expired = why.find(" expired at ") != std::string::npos;
    Response r = ErrorResponse(401, "unauthorized", why);
    r.headers.emplace_back("WWW-Authenticate",
                           expired ? "Bearer error=\"invalid_token\", "
                                     "error_description=\"the token expired\""
                                   : "Bearer error=\"invalid_token\"");
    LogRefusal(auth_failures_, req, r, expired ? why : "a token that is not a live token");
    return r;
  }
  *caller = Caller{"token:" + token->name, token->scope};
  return std::nullopt;
}

std::optional<Response> Api::Admit(const Request& head) {
  if (std::optional<Response> open = Open(head)) {
    if (open->status == 403) LogRefusal(cross_site_, head, *open, "a Host it does not answer to");
    // A refusal now; an answer (a probe's) once the body is read.
    if (open->status >= 400) return open;
    return std::nullopt;
  }
  if (head.path == "/readyz") return std::nullopt;
  auto lease = clients_.Acquire();
  Caller caller;
  return Gate(head, *lease, &caller);
}

Response Api::Handle(const Request& req) {
  if (std::optional<Response> open = Open(req)) {
    if (open->status == 403) LogRefusal(cross_site_, req, *open, "a Host it does not answer to");
    return *open;
  }
  auto lease = clients_.Acquire();
  Client& c = *lease;
  if (req.path == "/readyz" && req.method == "GET") {
    if (draining_) return ErrorResponse(503, "draining", "the server is shutting down");
    auto version = c.SchemaVersion();
    if (!version.has_value()) return ErrorResponse(version.error());
    return JsonResponse({{"status", "ready"}, {"schema_version", *version}});
  }
  Caller caller;
  if (std::optional<Response> refused = Gate(req, c, &caller)) return *refused;
  c.SetActor(caller.actor);
  Response r = Route(req, c, caller);
  r.actor = caller.actor;
  return r;
}

}  // namespace warden::server
