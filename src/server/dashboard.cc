#include "server/dashboard.h"

#include <string>

namespace warden::server {
namespace {

constexpr char kContentSecurityPolicy[] =
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

std::string ContentType(std::string_view name) {
  auto ends_with = [&](std::string_view ext) {
    return name.size() >= ext.size() && name.substr(name.size() - ext.size()) == ext;
  };
  if (ends_with(".html")) return "text/html; charset=utf-8";
  if (ends_with(".js") || ends_with(".mjs")) return "text/javascript; charset=utf-8";
  if (ends_with(".css")) return "text/css; charset=utf-8";
  if (ends_with(".svg")) return "image/svg+xml";
  if (ends_with(".png")) return "image/png";
  if (ends_with(".ico")) return "image/x-icon";
  return "application/octet-stream";
}

// The headers of every dashboard answer, errors included.
Response WithPageHeaders(Response r) {
  r.headers.emplace_back("Content-Security-Policy", kContentSecurityPolicy);
  r.headers.emplace_back("X-Frame-Options", "DENY");
  r.headers.emplace_back("Referrer-Policy", "no-referrer");
  return r;
}

Response Plain(int status, std::string text) {
  Response r;
  r.status = status;
  r.content_type = "text/plain; charset=utf-8";
  r.body = std::move(text);
  return WithPageHeaders(std::move(r));
}

}  // namespace

std::optional<Response> DashboardResponse(const Request& req) {
  constexpr std::string_view kPrefix = "/ui/";
  std::string_view name;
  if (req.path == "/" || req.path == "/ui" || req.path == "/ui/") {
    name = "index.html";
  } else if (std::string_view(req.path).substr(0, kPrefix.size()) == kPrefix) {
    name = std::string_view(req.path).substr(kPrefix.size());
  } else {
    return std::nullopt;
  }
  if (req.method != "GET") {
    Response r = Plain(405, "the dashboard's files take GET\n");
    r.headers.emplace_back("Allow", "GET");
    return r;
  }
  for (const EmbeddedFile& f : DashboardFiles()) {
    if (f.name != name) continue;
    Response r;
    r.content_type = ContentType(f.name);
    r.body = std::string(f.bytes);
    return WithPageHeaders(std::move(r));
  }
  return Plain(404, "no such file of the dashboard\n");
}

}  // namespace warden::server
