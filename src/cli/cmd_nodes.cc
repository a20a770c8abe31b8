// warden nodes [ls | add | remove | disable | enable | sync] (warden/nodes.h)
#include <fmt/core.h>

#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>
#include <sstream>

#include "cli/cli.h"
#include "cli/with_client.h"
#include "warden/lists.h"
#include "warden/plural.h"

namespace warden::cli {
namespace {

// An inventory larger than this is not a list of machines.
constexpr size_t kMaxInventoryBytes = 16 << 20;

std::string StateOf(const NodeInfo& n) {
  if (!n.registered) return "unregistered";
  if (!n.present) return n.enabled ? "removed" : "removed,disabled";
  return n.enabled ? "enabled" : "disabled";
}

void PrintNodeTable(const std::vector<NodeInfo>& nodes) {
  if (nodes.empty()) {
    std::cout << "no nodes: none is registered and no worker is live\n";
    return;
  }
  size_t width = 4;
  for (const NodeInfo& n : nodes) width = std::max(width, std::min<size_t>(n.name.size(), 40));
  fmt::print("{:<{}}  {:<16}  {:>8}  {:>7}  {:>7}\n", "NODE", width, "STATE", "CAPACITY",
             "RUNNING", "WORKERS");
  for (const NodeInfo& n : nodes) {
    fmt::print("{:<{}}  {:<16}  {:>8}  {:>7}  {:>7}\n", OneLine(n.name, width), width, StateOf(n),
               n.capacity ? std::to_string(*n.capacity) : "-", n.running, n.live_workers);
  }
}

Result<std::string> ReadInventory(const std::string& from) {
  std::string text;
  if (from == "-") {
    text.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
  } else {
    std::ifstream in(from, std::ios::binary);
    if (!in) return InvalidArgument("cannot read the inventory " + OneLine(from, 200));
    text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  if (text.size() > kMaxInventoryBytes) {
    return InvalidArgument("the inventory is larger than 16 MiB");
  }
  return text;
}

void PrintSync(const Client::NodeSync& s, bool dry_run) {
  const NodeSyncReport& r = s.report;
  const char* verb = dry_run ? "would be " : "";
  if (!r.added.empty()) fmt::print("{}added: {}\n", verb, JoinList(r.added, ", "));
  if (!r.revived.empty()) fmt::print("{}back: {}\n", verb, JoinList(r.revived, ", "));
  if (!r.resized.empty()) fmt::print("{}resized: {}\n", verb, JoinList(r.resized, ", "));
  if (!r.removed.empty()) fmt::print("{}removed: {}\n", verb, JoinList(r.removed, ", "));
  if (!r.disabled.empty()) {
    fmt::print("still disabled (the operator's flag): {}\n", JoinList(r.disabled, ", "));
  }
  fmt::print("{}{} unchanged\n", dry_run ? "dry run: nothing changed; " : "",
             Plural(r.unchanged, "node"));
  if (s.workers_released > 0) {
    fmt::print("released {} of the removed nodes ({} back)\n", Plural(s.workers_released, "worker"),
               Plural(s.jobs_recovered, "job"));
  }
}

// `warden nodes` and `warden nodes ls`.
Action ListNodes(Globals& g) {
  return WithClient(g, [&g](Client& c) -> Status {
    WARDEN_ASSIGN_OR_RETURN(auto list, c.ListNodes());
    if (g.json) {
      Json out = Json::array();
      for (const NodeInfo& n : list) out.push_back(NodeToJson(n));
      PrintJson(out);
    } else {
      PrintNodeTable(list);
    }
    return Status::Ok();
  });
}

void AddListCommand(CLI::App* nodes, Globals& g, Action* action) {
  CLI::App* ls = nodes->add_subcommand(
      "ls", "list nodes: state, capacity, running jobs, live workers (the default)");
  ls->callback([=, &g] {
    *action = ListNodes(g);
  });
}

void AddAddCommand(CLI::App* nodes, Globals& g, Action* action) {
  auto name = std::make_shared<std::string>();
  auto capacity = std::make_shared<std::string>();
  CLI::App* add = nodes->add_subcommand(
      "add", "register a node (or bring a removed one back); its enabled flag is kept");
  add->add_option("node", *name, "node name (as its workers register: host name or --node)")
      ->required();
  CLI::Option* cap = add->add_option(
      "--capacity", *capacity,
      "at most N jobs running on the node at once, across its workers; - for no limit");
  add->callback([=, &g] {
    NodeSpec spec{*name, std::nullopt};
    const bool set_capacity = cap->count() > 0;
    if (set_capacity) {
      auto n = ParseNodeCapacity(*capacity);
      if (!n.has_value()) {
        *action = [s = n.error()] { return Fail(s.Annotate("--capacity")); };
        return;
      }
      spec.capacity = *n;
    }
    *action = WithClient(g, [=, &g](Client& c) -> Status {
      WARDEN_ASSIGN_OR_RETURN(bool changed, c.AddNode(spec, set_capacity));
      if (g.json) {
        PrintJson({{"node", spec.name}, {"changed", changed}});
      } else {
        std::cout << "node " << spec.name << (changed ? " registered" : " unchanged") << "\n";
      }
      return Status::Ok();
    }, DbOpen::kCreateIfMissing);  // a first step of setting up, as `init`
  });
}

void AddEnableCommands(CLI::App* nodes, Globals& g, Action* action) {
  for (const bool enable : {false, true}) {
    auto name = std::make_shared<std::string>();
    CLI::App* sub = nodes->add_subcommand(
        enable ? "enable" : "disable",
        enable ? "let a node's workers claim again"
               : "stop a node's workers claiming: they drain (running jobs finish, or are "
                 "released after --shutdown-timeout); survives every sync");
    sub->add_option("node", *name, "node name")->required();
    sub->callback([=, &g] {
      *action = WithClient(g, [=, &g](Client& c) -> Status {
        WARDEN_ASSIGN_OR_RETURN(bool changed, c.SetNodeEnabled(*name, enable));
        if (g.json) {
          PrintJson({{"node", *name}, {"enabled", enable}, {"changed", changed}});
        } else {
          std::cout << "node " << *name << (changed ? " " : " was already ")
                    << (enable ? "enabled" : "disabled") << "\n";
        }
        return Status::Ok();
      });
    });
  }
}

void AddRemoveCommand(CLI::App* nodes, Globals& g, Action* action) {
  auto name = std::make_shared<std::string>();
  auto force = std::make_shared<bool>(false);
  CLI::App* rm = nodes->add_subcommand(
      "remove", "take a node out: its workers claim nothing more and drain; its jobs come "
                "back by the usual recovery");
  rm->add_option("node", *name, "node name")->required();
  rm->add_flag("--force", *force,
               "the machine is gone: release its live workers now (their jobs come back at "
               "once, as `workers release --force`)");
  rm->callback([=, &g] {
    *action = WithClient(g, [=, &g](Client& c) -> Status {
      WARDEN_ASSIGN_OR_RETURN(Client::NodeRemoval r, c.RemoveNode(*name, *force));
      if (g.json) {
        PrintJson({{"node", *name},
                   {"changed", r.changed},
                   {"workers_released", r.workers_released},
                   {"jobs_recovered", r.jobs_recovered}});
        return Status::Ok();
      }
      std::cout << "node " << *name << (r.changed ? " removed" : " was already removed");
      if (*force) {
        std::cout << "; released " << Plural(r.workers_released, "worker") << " ("
                  << Plural(r.jobs_recovered, "job") << " back)";
      }
      std::cout << "\n";
      return Status::Ok();
    });
  });
}

void AddSyncCommand(CLI::App* nodes, Globals& g, Action* action) {
  struct SyncFlags {
    std::string from;
    bool dry_run = false;
    bool force = false;
    bool allow_empty = false;
  };
  auto f = std::make_shared<SyncFlags>();
  CLI::App* sync = nodes->add_subcommand(
      "sync", "make the registry's nodes an inventory's: add, resize, remove (disabled "
              "stays disabled)");
  sync->add_option("--from", f->from,
                   "the inventory: a file, or - for stdin; lines of NAME [CAPACITY], or a "
                   "JSON array of names or {\"name\", \"capacity\"}")
      ->required();
  sync->add_flag("--dry-run", f->dry_run, "print what would change, change nothing");
  sync->add_flag("--force", f->force,
                 "the removed nodes' machines are gone: release their live workers now");
  sync->add_flag("--allow-empty", f->allow_empty,
                 "accept an inventory of no node (it removes every node)");
  sync->callback([=, &g] {
    auto text = ReadInventory(f->from);
    if (!text.has_value()) {
      *action = [s = text.error()] { return Fail(s); };
      return;
    }
    auto inventory = ParseInventory(*text);
    if (!inventory.has_value()) {
      *action = [s = inventory.error()] { return Fail(s); };
      return;
    }
    *action = WithClient(g, [=, &g, nodes = *inventory](Client& c) -> Status {
      WARDEN_ASSIGN_OR_RETURN(Client::NodeSync s,
                              c.SyncNodes(nodes, f->dry_run, f->force, f->allow_empty));
      if (g.json) {
        PrintJson(NodeSyncResultToJson(s.report, f->dry_run, s.workers_released,
                                       s.jobs_recovered));
      } else {
        PrintSync(s, f->dry_run);
      }
      return Status::Ok();
    }, DbOpen::kCreateIfMissing);
  });
}

}  // namespace

void AddNodesCommand(CLI::App& app, Globals& g, Action* action) {
  CLI::App* nodes = app.add_subcommand(
      "nodes", "the machines workers run on: which take work, and how much (docs/nodes.md)");
  AddListCommand(nodes, g, action);
  AddAddCommand(nodes, g, action);
  AddEnableCommands(nodes, g, action);
  AddRemoveCommand(nodes, g, action);
  AddSyncCommand(nodes, g, action);
  nodes->callback([=, &g] {
    if (!nodes->get_subcommands().empty()) return;
    *action = ListNodes(g);
  });
}

}  // namespace warden::cli
