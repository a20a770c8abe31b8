// The node routes' request bodies (server/node_bodies.h).
#include "server/node_bodies.h"

#include <cstdint>

#include "warden/text.h"

namespace warden::server {
namespace {

// A JSON body as an object, or why not ("" text: an empty object).
Result<Json> ObjectIn(const std::string& text, const std::string& usage) {
  if (text.empty()) return Json::object();
  auto body = ParseJsonText(text);
  if (!body.has_value()) return InvalidArgument("the request body " + body.error().message());
  if (!body->is_object()) return InvalidArgument(usage);
  return *body;
}

Result<bool> BoolIn(const Json& value, const std::string& name) {
  if (!value.is_boolean()) return InvalidArgument("\"" + name + "\" must be true or false");
  return value.get<bool>();
}

}  // namespace

Result<NodePutBody> NodePutBodyIn(const std::string& text) {
  const std::string usage =
      "the body must be {\"capacity\": N or null} (or empty: the capacity stays as it is)";
  WARDEN_ASSIGN_OR_RETURN(Json body, ObjectIn(text, usage));
  NodePutBody out;
  for (const auto& [name, value] : body.items()) {
    if (name != "capacity") {
      return InvalidArgument("unknown member \"" + OneLine(name, 40) + "\": " + usage);
    }
    out.set_capacity = true;
    if (value.is_null()) continue;
    if (!value.is_number_integer()) {
      return InvalidArgument("\"capacity\" must be a whole number from 1 to " +
                             std::to_string(kMaxNodeCapacity) + ", or null (no limit)");
    }
    const bool huge =
        value.is_number_unsigned() && value.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX);
    const int64_t n = huge ? INT64_MAX : value.get<int64_t>();
    WARDEN_RETURN_IF_ERROR(CheckNodeCapacity(n));
    out.capacity = n;
  }
  return out;
}

Result<NodeSyncBody> NodeSyncBodyIn(const std::string& text) {
  const std::string usage =
      "the body must be {\"nodes\": [name or {\"name\": ..., \"capacity\": N or null}, ...], "
      "\"dry_run\": bool, \"force\": bool, \"allow_empty\": bool}";
  WARDEN_ASSIGN_OR_RETURN(Json body, ObjectIn(text, usage));
  NodeSyncBody out;
  bool has_nodes = false;
  for (const auto& [name, value] : body.items()) {
    if (name == "nodes") {
      if (!value.is_array()) return InvalidArgument("\"nodes\" must be an array: " + usage);
      // The inventory's own parser (`warden nodes sync --from`), on the
      // array as its JSON text: one set of rules for both.
      auto nodes = ParseInventory(value.dump(-1, ' ', false, Json::error_handler_t::replace));
      if (!nodes.has_value()) return nodes.error().Annotate("nodes");
      out.nodes = std::move(*nodes);
      has_nodes = true;
    } else if (name == "dry_run") {
      WARDEN_ASSIGN_OR_RETURN(out.dry_run, BoolIn(value, name));
    } else if (name == "force") {
      WARDEN_ASSIGN_OR_RETURN(out.force, BoolIn(value, name));
    } else if (name == "allow_empty") {
      WARDEN_ASSIGN_OR_RETURN(out.allow_empty, BoolIn(value, name));
    } else {
      return InvalidArgument("unknown member \"" + OneLine(name, 40) + "\": " + usage);
    }
  }
  if (!has_nodes) return InvalidArgument(usage);
  if (out.nodes.empty() && !out.allow_empty) {
    // The CLI's refusal, with the body's word for --allow-empty.
    return InvalidArgument(
        "the inventory lists no node: a sync would remove every node (an inventory command "
        "that failed looks the same); send \"allow_empty\": true if that is meant");
  }
  return out;
}

}  // namespace warden::server
