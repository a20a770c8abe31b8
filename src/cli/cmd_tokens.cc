// warden tokens [create NAME --scope S [--expires-in D] | revoke NAME]  and  warden audit
#include <fmt/core.h>

#include <iostream>

#include "cli/cli.h"
#include "cli/render.h"
#include "cli/with_client.h"

namespace warden::cli {
namespace {

// "3m ago", "in 29d", or `none`.
std::string WhenOr(const std::optional<TimeMs>& t, TimeMs now, const char* none) {
  return t ? HumanWhen(*t, now) : none;
}

void PrintTokens(const std::vector<TokenInfo>& list, TimeMs now) {
  const char* row = "{:>4}  {:<24}  {:<8}  {:<24}  {:<12}  {:<14}  {}\n";
  fmt::print(fmt::runtime(row), "ID", "NAME", "SCOPE", "CREATED", "LAST USED", "EXPIRES", "STATE");
  for (const TokenInfo& t : list) {
    std::string state = "live";
    if (t.revoked_at) {
      state = "revoked " + FormatTime(*t.revoked_at);
    } else if (t.expires_at && *t.expires_at <= now) {
      state = "expired";
    }
    fmt::print(fmt::runtime(row), t.id, OneLine(t.name, 24), ScopeName(t.scope),
               FormatTime(t.created_at), WhenOr(t.last_used_at, now, "never"),
               WhenOr(t.expires_at, now, "never"), state);
  }
}

}  // namespace

void AddTokensCommand(CLI::App& app, Globals& g, Action* action) {
  CLI::App* tokens = app.add_subcommand(
      "tokens",
      "list the HTTP API's tokens: scope, last use (to the minute), expiry; secrets are never "
      "shown again");
  tokens->callback([=, &g] {
    if (!tokens->get_subcommands().empty()) return;
    *action = WithClient(g, [&g](Client& c) -> Status {
      WARDEN_ASSIGN_OR_RETURN(auto list, c.ListTokens());
      if (g.json) {
        Json out = Json::array();
        for (const auto& t : list) out.push_back(TokenToJson(t));
        PrintJson(out);
        return Status::Ok();
      }
      if (list.empty()) {
        std::cout << "no tokens: create one with warden tokens create NAME\n";
        return Status::Ok();
      }
      PrintTokens(list, NowMs());
      return Status::Ok();
    });
  });

  auto name = std::make_shared<std::string>();
  auto scope = std::make_shared<std::string>("read");
  auto expires_in = std::make_shared<std::string>();
  CLI::App* create = tokens->add_subcommand(
      "create", "create a token and print its secret, this once (only a hash is stored)");
  create->add_option("name", *name, "a name for who uses it, e.g. ci or dashboard")->required();
  create->add_option("--scope", *scope,
                     "read, enqueue (+read), operate (+retry, cancel, pause) or admin (+tokens)")
      ->capture_default_str();
  create->add_option("--expires-in", *expires_in,
                     "refused as expired this long after now, e.g. 90d (at least 1m; "
                     "default: never)");
  create->callback([=, &g] {
    *action = [=, &g]() -> int {
      const std::optional<Scope> s = ParseScope(*scope);
      if (!s) {
        return Fail(InvalidArgument("--scope '" + OneLine(*scope, 40) +
                                    "' is not one of read, enqueue, operate, admin"));
      }
      std::optional<Millis> lifetime;
      if (!expires_in->empty()) {
        auto d = Duration("--expires-in", *expires_in);
        if (!d.has_value()) return Fail(d.error());
        lifetime = *d;
      }
      return WithClient(g, [=, &g](Client& c) -> Status {
        WARDEN_ASSIGN_OR_RETURN(NewToken t, c.CreateToken(*name, *s, lifetime));
        if (g.json) {
          Json out = TokenToJson(t.info);
          out["token"] = t.secret;
          PrintJson(out);
        } else {
          std::cout << t.secret << "\n";
          std::cerr << "token " << t.info.name << " (" << ScopeName(t.info.scope)
                    << (t.info.expires_at ? ", expires " + FormatTime(*t.info.expires_at) : "")
                    << "): shown this once; send it as Authorization: Bearer TOKEN\n";
        }
        return Status::Ok();
      }, DbOpen::kCreateIfMissing)();  // a first step of setting up, as `init`
    };
  });

  auto target = std::make_shared<std::string>();
  CLI::App* revoke = tokens->add_subcommand("revoke", "revoke a token: refused from now on");
  revoke->add_option("token", *target, "token name or id")->required();
  revoke->callback([=, &g] {
    *action = WithClient(g, [=, &g](Client& c) -> Status {
      WARDEN_ASSIGN_OR_RETURN(TokenInfo t, c.RevokeToken(*target));
      if (g.json) {
        PrintJson(TokenToJson(t));
      } else {
        std::cout << "token " << t.name << " (id " << t.id << ") revoked\n";
      }
      return Status::Ok();
    });
  });
}

void AddAuditCommand(CLI::App& app, Globals& g, Action* action) {
  auto limit = std::make_shared<int>(50);
  auto before = std::make_shared<int64_t>(0);
  CLI::App* audit = app.add_subcommand(
      "audit", "operator actions, newest first: who paused, retried, cancelled, released");
  audit->add_option("--limit", *limit, "how many entries")->capture_default_str();
  audit->add_option("--before", *before, "only entries older than this entry id (paging)");
  audit->callback([=, &g] {
    *action = WithClient(g, [=, &g](Client& c) -> Status {
      WARDEN_ASSIGN_OR_RETURN(auto list, c.ListAudit(*limit, *before));
      if (g.json) {
        Json out = Json::array();
        for (const auto& e : list) out.push_back(AuditToJson(e));
        PrintJson(out);
        return Status::Ok();
      }
      if (list.empty()) {
        std::cout << "no operator actions recorded\n";
        return Status::Ok();
      }
      fmt::print("{:>6}  {:<24}  {:<20}  {:<24}  {:>7}  {}\n", "ID", "AT", "ACTOR", "ACTION",
                 "CHANGED", "TARGET");
      for (const auto& e : list) {
        fmt::print("{:>6}  {:<24}  {:<20}  {:<24}  {:>7}  {}\n", e.id, FormatTime(e.at),
                   OneLine(e.actor, 20), e.action, e.count, OneLine(e.target, 80));
      }
      return Status::Ok();
    });
  });
}

}  // namespace warden::cli
