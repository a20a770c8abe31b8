// warden workers [release]
#include <iostream>

#include "cli/cli.h"
#include "cli/render.h"
#include "cli/with_client.h"
#include "warden/text.h"
#include "warden/plural.h"

namespace warden::cli {

void AddWorkersCommand(CLI::App& app, Globals& g, Action* action) {
  auto target = std::make_shared<std::string>();
  auto wide = std::make_shared<bool>(false);
  auto all = std::make_shared<bool>(false);
  CLI::App* workers = app.add_subcommand("workers", "list live workers (active, draining)");
  workers->add_flag("--wide", *wide, "show worker and node names whole, however long");
  // Each start of a worker is a row of its own (a restart under the same
  // name included), so the past ones would soon bury the live ones.
  workers->add_flag("--all", *all,
                    "also stopped and dead workers: every incarnation, with death reasons");
  workers->callback([=, &g] {
    if (!workers->get_subcommands().empty()) return;
    *action = WithClient(g, [=, &g](Client& c) -> Status {
      WARDEN_ASSIGN_OR_RETURN(auto list, c.ListWorkers(/*live_only=*/!*all));
      if (g.json) {
        Json out = Json::array();
        for (const auto& w : list) out.push_back(WorkerToJson(w));
        PrintJson(out);
      } else {
        PrintWorkerTable(list, *wide);
      }
      return Status::Ok();
    });
  });
  auto force = std::make_shared<bool>(false);
  CLI::App* release = workers->add_subcommand(
      "release", "declare a worker dead now and recover its jobs (its host is gone)");
  release->add_option("worker", *target, "worker name or id")->required();
  release->add_flag("--force", *force,
                    "release it even if its process is running on this host");
  release->callback([=, &g] {
    *action = WithClient(g, [=, &g](Client& c) -> Status {
      WARDEN_ASSIGN_OR_RETURN(int n, c.ReleaseWorker(*target, *force));
      if (g.json) {
        PrintJson({{"worker", *target}, {"recovered", n}});
      } else {
        std::cout << "worker " << *target << " declared dead; " << Plural(n, "job")
                  << " recovered\n";
      }
      return Status::Ok();
    });
  });
}

}  // namespace warden::cli
