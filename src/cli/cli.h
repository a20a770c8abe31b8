// The `warden` command: a thin shell over the library. Each subcommand
// parses its flags, calls warden's public API and prints the answer, as
// text or (with --json) one JSON document on stdout.
//
// Exit status: 0 success, 2 usage error, 1 any other failure, with a
// one-line error on stderr. With --json, every outcome prints exactly one
// JSON document on stdout: a failure's is {"error": {"code", "message"}}.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "warden/warden.h"

namespace warden::cli {

struct Globals {
  std::string db = "./warden.db";
  std::string config;  // --config FILE (docs/configuration.md)
  bool json = false;
};

// A subcommand's body: returns the process exit status.
using Action = std::function<int()>;

// Each registers its subcommand(s) on `app` and sets `*action` when chosen.
void AddInitCommand(CLI::App& app, Globals& g, Action* action);
void AddAddCommand(CLI::App& app, Globals& g, Action* action);
void AddWorkerCommand(CLI::App& app, Globals& g, Action* action);
void AddJobsCommand(CLI::App& app, Globals& g, Action* action);
void AddWorkersCommand(CLI::App& app, Globals& g, Action* action);
void AddAdminCommands(CLI::App& app, Globals& g, Action* action);  // stats, sweep
void AddWaitCommand(CLI::App& app, Globals& g, Action* action);
void AddDemoCommand(CLI::App& app, Globals& g, Action* action);
void AddQueuesCommand(CLI::App& app, Globals& g, Action* action);
void AddNodesCommand(CLI::App& app, Globals& g, Action* action);
void AddTokensCommand(CLI::App& app, Globals& g, Action* action);
void AddAuditCommand(CLI::App& app, Globals& g, Action* action);
void AddServeCommand(CLI::App& app, Globals& g, Action* action);
void AddConfigCommand(CLI::App& app, Globals& g, Action* action);  // config check

// Prints "warden: <status>" on stderr (and, with --json, the error document
// on stdout); returns the exit status for it.
int Fail(const Status& s);
// The same, with the keys of `more` (an object) beside "error" in the error
// document: what a failure that came part way still did.
int FailWith(const Status& s, const Json& more);
// A usage error found before any command ran (CLI11's, an unknown
// command): "warden: usage: <message> (see warden --help)"; exit 2.
int FailUsage(const std::string& message);
// Whether Fail and FailUsage also print the error document. main() sets it
// before parsing, from the raw arguments (a parse error comes before
// Globals::json is known), then from Globals::json. Every failure goes
// through Fail, so one switch covers every command.
void SetJsonErrors(bool on);
// Only init, add, worker, serve and tokens create may create a database. Every other command
// acts on what is there (lists, waits, retries, cancels, releases, sweeps):
// it opens with kExisting and fails, naming the path, when the database
// does not exist, so that a mistyped path never passes for an empty queue.
enum class DbOpen { kCreateIfMissing, kExisting };
Result<std::unique_ptr<Client>> OpenClient(const Globals& g,
                                           DbOpen how = DbOpen::kCreateIfMissing);
// For CLI11 options that take a duration.
Result<Millis> Duration(const std::string& flag, const std::string& text);
void PrintJson(const Json& j);

// The JobSpec that `warden add ARGS...` would enqueue (ARGS: what follows
// "add"), through the same flags and checks, without opening a database
// (for tests and fuzzing). A payload of "-" is read from `in`. Every error,
// a usage error included, is InvalidArgument with a one-line message.
Result<JobSpec> ParseAddArgs(const std::vector<std::string>& args, std::istream& in = std::cin);

}  // namespace warden::cli
