#include "cli/cli.h"
namespace warden::cli {
void AddDemoCommand(CLI::App& app, Globals& g, Action* action) {
  CLI::App* cmd = app.add_subcommand("demo", "crash-recovery demonstration");
  cmd->callback([&g, action] { *action = [&g] { (void)g; return 0; }; });
}
}  // namespace warden::cli
