// ADDR:PORT as `serve --listen`, `worker --metrics-listen` and
// `--health-listen` (and their keys in warden.toml) give it. Pure: no I/O
// (fuzz target `request_target`).
#pragma once

#include <string>

#include "warden/status.h"

namespace warden::server {

// Splits ADDR:PORT; the address must be an IP address or localhost (which
// is 127.0.0.1), no other host name: what a name resolves to can change,
// and loopback must be known for sure. Errors name `flag`, the flag the
// value came from (a config file's key, through Settings::Attribute).
Status ParseListen(const std::string& listen, std::string* host, int* port,
                   const char* flag = "--listen");
bool IsLoopback(const std::string& host);

}  // namespace warden::server
