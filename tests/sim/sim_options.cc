#include "sim_options.h"

#include <array>
#include <sstream>

namespace warden::sim {
namespace {

struct MutationEntry {
  Mutation m;
  const char* name;
};
constexpr std::array<MutationEntry, 6> kMutations{{
    {Mutation::kNone, "none"},
    {Mutation::kCompleteUnfenced, "complete_unfenced"},
    {Mutation::kFenceAtFullLease, "fence_at_full_lease"},
    {Mutation::kNoConcurrencyCheck, "no_concurrency_check"},
    {Mutation::kRescueAmoRetryable, "rescue_amo_retryable"},
    {Mutation::kHeartbeatForeign, "heartbeat_foreign"},
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
    if (item == "lost_claim_replies") {
      f.lost_claim_replies = true;
    } else if (item == "host_suspend") {
      f.host_suspend = true;
    } else if (item == "session_cut") {
      f.session_cut = true;
    } else if (item == "checkpoint_blocks_kill") {
      f.checkpoint_blocks_kill = true;
    } else if (item == "late_claim_replies") {
      f.late_claim_replies = true;
    } else if (item == "strict_recovery_bound") {
      f.strict_recovery_bound = true;
    } else if (item == "short_lease_self_fence") {
      f.short_lease_self_fence = true;
    } else if (item == "start_after_thaw") {
      f.start_after_thaw = true;
    } else if (item == "all") {
      f = KnownIssues{true, true, true, true, true, true, true, true};
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
  add(f.lost_claim_replies, "lost_claim_replies");
  add(f.host_suspend, "host_suspend");
  add(f.session_cut, "session_cut");
  add(f.checkpoint_blocks_kill, "checkpoint_blocks_kill");
  add(f.late_claim_replies, "late_claim_replies");
  add(f.strict_recovery_bound, "strict_recovery_bound");
  add(f.short_lease_self_fence, "short_lease_self_fence");
  add(f.start_after_thaw, "start_after_thaw");
  return list;
}

std::string ReproCommand(const std::string& binary, const RunOptions& o) {
  std::string cmd = binary + " --seed " + std::to_string(o.seed);
  if (o.mutation != Mutation::kNone) cmd += std::string(" --mutate ") + MutationName(o.mutation);
  if (o.issues.any()) cmd += " --known-issues " + KnownIssuesFlag(o.issues);
  return cmd;
}

}  // namespace warden::sim
