// /metrics: the Prometheus text format (version 0.0.4) of
// Client::ExportMetrics (docs/metrics.md).
#include "server/api.h"

namespace warden::server {

Response Api::Metrics(Client& c) {
  auto text = c.ExportMetrics();
  if (!text.has_value()) return ErrorResponse(text.error());
  Response r;
  r.content_type = "text/plain; version=0.0.4; charset=utf-8";
  r.body = std::move(*text);
  return r;
}

}  // namespace warden::server
