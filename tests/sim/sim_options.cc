#include "sim_options.h"

#include <array>
#include <sstream>

namespace warden::sim {
namespace {

struct MutationEntry {
  Mutation m;
  const char* name;
};
constexpr std::array<MutationEntry, 10> kMutations{{
    {Mutation::kNone, "none"},
    {Mutation::kCompleteUnfenced, "complete_unfenced"},
    {Mutation::kFenceAtFullLease, "fence_at_full_lease"},
    {Mutation::kNoConcurrencyCheck, "no_concurrency_check"},
    {Mutation::kRescueAmoRetryable, "rescue_amo_retryable"},
    {Mutation::kHeartbeatForeign, "heartbeat_foreign"},
    {Mutation::kStartNeedsWorker, "start_needs_worker"},
    {Mutation::kRescueByWallClock, "rescue_by_wall_clock"},
    {Mutation::kPresumeByWallClock, "presume_by_wall_clock"},
    {Mutation::kPassStartSightings, "pass_start_sightings"},
}};

}  // namespace

const char* MutationName(Mutation m) {
  for (const auto& e : kMutations) {
    if (e.m == m) return e.name;
  }
  return "unknown";
}

std::optional<Mutation> ParseMutation(const std::string& name) {
  for (const auto& e : kMutations) {
    if (name == e.name) return e.m;
  }
  return std::nullopt;
}

std::vector<Mutation> AllMutations() {
  std::vector<Mutation> out;
  for (const auto& e : kMutations) {
    if (e.m != Mutation::kNone) out.push_back(e.m);
  }
  return out;
}

std::optional<KnownIssues> ParseKnownIssues(const std::string& comma_list) {
  KnownIssues f;
  std::stringstream in(comma_list);
  std::string item;
  while (std::getline(in, item, ',')) {
    if (item == "session_cut") {
      f.session_cut = true;
    } else if (item == "all") {
      f = KnownIssues{true};
    } else if (!item.empty()) {
      return std::nullopt;
    }
  }
  return f;
}

std::string KnownIssuesFlag(const KnownIssues& f) {
  std::string list;
  auto add = [&](bool on, const char* name) {
    if (!on) return;
    if (!list.empty()) list += ",";
    list += name;
  };
  add(f.session_cut, "session_cut");
  return list;
}

std::string ReproCommand(const std::string& binary, const RunOptions& o) {
  std::string cmd = binary + " --seed " + std::to_string(o.seed);
  if (o.mutation != Mutation::kNone) cmd += std::string(" --mutate ") + MutationName(o.mutation);
  if (o.issues.any()) cmd += " --known-issues " + KnownIssuesFlag(o.issues);
  return cmd;
}

}  // namespace warden::sim
