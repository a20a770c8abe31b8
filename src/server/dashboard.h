// The web dashboard (web/; docs/http-api.md#dashboard): its files are
// compiled into the binary (cmake/embed_files.cmake writes them into a
// generated source), so `warden serve` needs no file and no network at run
// time. The files hold no data and need no token: the page asks the API for
// everything it shows, with the token the person gives it.
//
// Every answer carries a strict Content-Security-Policy (scripts and styles
// from the server's own files only, no inline code, no framing, requests to
// the server only), so that a job's text that slipped into the page as
// markup still could not run. Thread-safe: everything here is constant.
#pragma once

#include <optional>
#include <span>
#include <string_view>

#include "server/http_types.h"

namespace warden::server {

struct EmbeddedFile {
  std::string_view name;  // "index.html"
  std::string_view bytes;
};

// Every file of web/, by name (defined in the generated dashboard_files.cc).
std::span<const EmbeddedFile> DashboardFiles();

// The dashboard's answer to GET / and GET /ui/FILE (405 to another method,
// 404 to an unknown file), or nullopt for any other path: the API's.
std::optional<Response> DashboardResponse(const Request& req);

}  // namespace warden::server
