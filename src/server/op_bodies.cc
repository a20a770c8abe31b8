#include "server/op_bodies.h"

#include "warden/text.h"

namespace warden::server {

bool FilterSetsNothing(const JobFilter& f) {
  return f.states.empty() && f.queue.empty() && f.task.empty() && f.unique_key.empty() &&
         f.concurrency_key.empty() && !f.created_after && !f.created_before && !f.finished_after &&
         !f.finished_before && f.search.empty() && !f.error_kind && !f.rescued;
}

Result<BulkBody> BulkBodyIn(const Json& b) {
  const std::string usage =
      "the body must be {\"action\": \"retry\"|\"cancel\"|\"delete\", \"filter\": {...}, "
      "\"dry_run\": true|false, \"all\": true|false, \"fresh\": true|false}";
  if (!b.is_object()) return InvalidArgument(usage);
  for (const auto& [name, value] : b.items()) {
    if (name != "action" && name != "filter" && name != "dry_run" && name != "all" &&
        name != "fresh") {
      return InvalidArgument("unknown member \"" + OneLine(name, 40) + "\": " + usage);
    }
  }
  if (!b.contains("action") || !b["action"].is_string() ||
      !ParseBulkAction(b["action"].get<std::string>())) {
    return InvalidArgument(usage);
  }
  BulkBody out;
  out.action = *ParseBulkAction(b["action"].get<std::string>());
  for (const auto& [name, field] :
       {std::pair{"dry_run", &out.dry_run}, std::pair{"all", &out.all},
        std::pair{"fresh", &out.fresh}}) {
    if (!b.contains(name)) continue;
    if (!b[name].is_boolean()) return InvalidArgument(usage);
    *field = b[name].get<bool>();
  }
  if (out.fresh && out.action != BulkAction::kRetry) {
    return InvalidArgument(std::string("\"fresh\" is a retry's, not a ") +
                           BulkActionName(out.action) +
                           "'s: only a retry keeps or drops a job's checkpoint");
  }
  WARDEN_ASSIGN_OR_RETURN(out.filter,
                          JobFilterFromJson(b.contains("filter") ? b["filter"] : Json::object()));
  if (FilterSetsNothing(out.filter) && !out.all) {
    return InvalidArgument(std::string("a bulk ") + BulkActionName(out.action) +
                           " with no filter would act on every job: give a filter "
                           "(\"filter\": {\"state\": ...}) or send \"all\": true");
  }
  return out;
}

Result<RetryOptions> RetryBodyIn(const Json& body) {
  if (body.is_null()) return RetryOptions{};
  const std::string usage = "the body must be empty or {\"fresh\": true|false}";
  if (!body.is_object()) return InvalidArgument(usage);
  for (const auto& [name, value] : body.items()) {
    if (name != "fresh") {
      return InvalidArgument("unknown member \"" + OneLine(name, 40) + "\": " + usage);
    }
    if (!value.is_boolean()) return InvalidArgument(usage);
  }
  return RetryOptions{body.value("fresh", false)};
}

Result<bool> PauseCreateIn(const Json& body) {
  if (body.is_null()) return false;
  const std::string usage = "the body must be empty or {\"create\": true|false}";
  if (!body.is_object()) return InvalidArgument(usage);
  for (const auto& [name, value] : body.items()) {
    if (name != "create") {
      return InvalidArgument("unknown member \"" + OneLine(name, 40) + "\": " + usage);
    }
    if (!value.is_boolean()) return InvalidArgument(usage);
  }
  return body.value("create", false);
}

}  // namespace warden::server
