// The node registry's routes (server/api_nodes.h): `warden nodes` over HTTP.
#include "server/api_nodes.h"

#include "server/api.h"
#include "warden/json_view.h"

namespace warden::server {
namespace {

// A 400 for a body the parser refused: invalid_json when it is not JSON.
Response BodyError(const Status& s) {
  if (s.message().rfind("the request body ", 0) == 0) {
    return ErrorResponse(400, "invalid_json", s.message());
  }
  return ErrorResponse(s);
}

}  // namespace

Response ListNodesRoute(Client& c) {
  auto nodes = c.ListNodes();
  if (!nodes.has_value()) return ErrorResponse(nodes.error());
  Json out = Json::array();
  for (const NodeInfo& n : *nodes) out.push_back(NodeToJson(n));
  return JsonResponse({{"nodes", out}});
}

Response PutNodeRoute(const Request& req, Client& c, const std::string& name) {
  auto body = NodePutBodyIn(req.body);
  if (!body.has_value()) return BodyError(body.error());
  const NodeSpec spec{name, body->capacity};
  auto changed = c.AddNode(spec, body->set_capacity);
  if (!changed.has_value()) return ErrorResponse(changed.error());
  return JsonResponse({{"node", name}, {"changed", *changed}});
}

Response SetNodeEnabledRoute(Client& c, const std::string& name, bool enabled) {
  auto changed = c.SetNodeEnabled(name, enabled);
  if (!changed.has_value()) return ErrorResponse(changed.error());
  return JsonResponse({{"node", name}, {"enabled", enabled}, {"changed", *changed}});
}

Response RemoveNodeRoute(Client& c, const std::string& name, bool force) {
  auto r = c.RemoveNode(name, force);
  if (!r.has_value()) return ErrorResponse(r.error());
  return JsonResponse({{"node", name},
                       {"changed", r->changed},
                       {"workers_released", r->workers_released},
                       {"jobs_recovered", r->jobs_recovered}});
}

Response SyncNodesRoute(const Request& req, Client& c) {
  auto body = NodeSyncBodyIn(req.body);
  if (!body.has_value()) return BodyError(body.error());
  auto s = c.SyncNodes(body->nodes, body->dry_run, body->force, body->allow_empty);
  if (!s.has_value()) return ErrorResponse(s.error());
  return JsonResponse(
      NodeSyncResultToJson(s->report, body->dry_run, s->workers_released, s->jobs_recovered));
}

}  // namespace warden::server
