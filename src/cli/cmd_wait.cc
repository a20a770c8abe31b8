// warden wait: block until the queue drains.
#include <chrono>
#include <thread>

#include "cli/cli.h"
#include "core/json_text.h"
#include "core/plural.h"

namespace warden::cli {

void AddWaitCommand(CLI::App& app, Globals& g, Action* action) {
  auto timeout = std::make_shared<std::string>();
  CLI::App* wait = app.add_subcommand(
      "wait", "block until no job is scheduled, available, retryable or running");
  wait->add_option("--timeout", *timeout, "give up after this long (exit 1)");
  wait->callback([=, &g] {
    *action = [=, &g] {
      Millis limit = Millis::max();
      if (!timeout->empty()) {
        auto d = Duration("--timeout", *timeout);
        if (!d.has_value()) return Fail(d.error());
        limit = *d;
      }
      auto client = OpenClient(g, DbOpen::kExisting);
      if (!client.has_value()) return Fail(client.error());
      const auto deadline = limit == Millis::max()
                                ? std::chrono::steady_clock::time_point::max()
                                : std::chrono::steady_clock::now() + limit;
      while (true) {
        auto n = (*client)->CountUnfinished();
        if (!n.has_value() && !n.error().transient()) return Fail(n.error());
        if (n.has_value() && *n == 0) {
          if (g.json) PrintJson({{"unfinished", 0}});
          return 0;
        }
        if (std::chrono::steady_clock::now() >= deadline) {
          return Fail(DeadlineExceeded(
              (n.has_value() ? Plural(*n, "job") : std::string("some jobs")) +
              " still unfinished after " + *timeout));
        }
        std::this_thread::sleep_for(Millis(100));
      }
    };
  });
}

}  // namespace warden::cli
