#!/usr/bin/env python3
"""The layers of docs/design.md, checked on every #include "..." under src/.

Each directory of src/ may include only the directories listed for it (and
system or third-party headers, written with <...>). It fails, naming the
file, the line and the rule, when a layer reaches where it must not: core
that does I/O, maintenance that leans on the runtime, a CLI or demo that
goes around the public API (include/warden/).

    tests/layers/check_layers.py [SRC_DIR]
"""
import os
import re
import sys

# What each layer may include, besides itself. `warden` is include/warden/,
# the public API.
ALLOWED = {
    "core": {"warden"},                                  # pure: no I/O
    "env": {"warden", "core"},                           # the OS, behind seams
    "store": {"warden", "core", "env"},
    "maintenance": {"warden", "core", "env", "store"},   # used by the runtime
    "runtime": {"warden", "core", "env", "store", "maintenance"},
    "client": {"warden", "core", "env", "store", "maintenance"},
    "cli": {"warden", "demo", "server"},                 # a thin shell: the public API
    "server": {"warden"},                                # HTTP over the public API
    "demo": {"warden"},
}

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def main():
    src = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "..", "src")
    failures, files = [], 0
    for layer in sorted(os.listdir(src)):
        root = os.path.join(src, layer)
        if not os.path.isdir(root):
            continue
        if layer not in ALLOWED:
            failures.append(f"{root}: a layer this check does not know: give it its rule")
            continue
        allowed = ALLOWED[layer] | {layer}
        for dirpath, _, names in os.walk(root):
            for name in sorted(names):
                if not name.endswith((".cc", ".h")):
                    continue
                path = os.path.join(dirpath, name)
                files += 1
                with open(path, encoding="utf-8") as f:
                    for n, line in enumerate(f, 1):
                        m = INCLUDE.match(line)
                        if not m:
                            continue
                        target = m.group(1).split("/")[0] if "/" in m.group(1) else layer
                        if target not in allowed:
                            failures.append(
                                f"{path}:{n}: src/{layer} includes \"{m.group(1)}\"; it may "
                                f"include only {', '.join(sorted(allowed))}")
    for f in failures:
        print(f)
    print(f"layers: {files} files, {len(failures)} violations")
    return 1 if failures or files == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
