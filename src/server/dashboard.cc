#include "server/dashboard.h"

#include <string>
#include <utility>

namespace warden::server {
namespace {

constexpr char kContentSecurityPolicy[] =
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

std::string ContentType(std::string_view name) {
  if (name.ends_with(".html")) return "text/html; charset=utf-8";
  if (name.ends_with(".js")) return "text/javascript; charset=utf-8";
  if (name.ends_with(".css")) return "text/css; charset=utf-8";
  if (name.ends_with(".svg")) return "image/svg+xml";
  if (name.ends_with(".png")) return "image/png";
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
  const std::string_view path = req.path;
  std::string_view name;
  if (path == "/" || path == "/ui" || path == "/ui/") {
    name = "index.html";
  } else if (path.starts_with("/ui/")) {
    name = path.substr(4);
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
