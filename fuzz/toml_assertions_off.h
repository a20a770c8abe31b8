// Forced into src/cli/config/config_file.cc in the fuzz build (before
// toml++): toml++'s own assertions off, as in the Debian library warden
// links (built with NDEBUG by g++, where they are nothing). One is wrong in
// toml++ 3.3 (README.md, Found so far); NDEBUG alone would not do, since
// under clang it turns that assertion into __builtin_assume.
#pragma once
#define TOML_ASSERT(expr) static_assert(true)
