// The node registry's routes of the HTTP API v1 (docs/http-api.md#nodes):
// thin shells over Client's node calls, as `warden nodes` is. The caller's
// scope and the method are checked by Api::Route before these are called;
// these read the request's body strictly (an unknown member, a wrong type:
// a 400 naming it) and answer with the JSON of `warden nodes --json`.
#pragma once

#include <string>

#include "server/http_types.h"
#include "server/node_bodies.h"
#include "warden/client.h"

namespace warden::server {

// GET /v1/nodes: {"nodes": [NodeToJson, ...]}.
Response ListNodesRoute(Client& c);
// PUT /v1/nodes/{name}: body {"capacity": N or null}, or none ({} or no
// body: the capacity stays as it is).
Response PutNodeRoute(const Request& req, Client& c, const std::string& name);
// POST /v1/nodes/{name}/disable and /enable.
Response SetNodeEnabledRoute(Client& c, const std::string& name, bool enabled);
// DELETE /v1/nodes/{name}; `force`: release its live workers at once.
Response RemoveNodeRoute(Client& c, const std::string& name, bool force);
// POST /v1/nodes/sync: {"nodes": [...], "dry_run", "force", "allow_empty"}.
Response SyncNodesRoute(const Request& req, Client& c);

}  // namespace warden::server
