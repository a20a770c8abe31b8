#!/usr/bin/env python3
"""Every line of warden's C++ is at most 100 columns (.clang-format's
ColumnLimit), so that no reader scrolls sideways and clang-format keeps
what it is given.

It fails naming each file:line that is longer, and how long. Run from the
repository's root (ctest `line_length` and `make check` do):

    scripts/check-line-length.py [LIMIT]
"""
import os
import subprocess
import sys

ROOTS = ("src", "include", "tests", "bench", "fuzz", "examples")
SUFFIXES = (".cc", ".h", ".cc.in", ".h.in")


def main():
    limit = int(sys.argv[1]) if len(sys.argv) > 1 else 100
    files = subprocess.run(["git", "ls-files", "--", *ROOTS], capture_output=True, text=True,
                           check=True).stdout.split()
    long_lines, checked = [], 0
    for path in files:
        if not path.endswith(SUFFIXES) or "/node_modules/" in path or not os.path.exists(path):
            continue
        checked += 1
        with open(path, encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                width = len(line.rstrip("\n"))
                if width > limit:
                    long_lines.append(f"{path}:{n}: {width} columns (at most {limit})")
    for line in long_lines:
        print(line)
    print(f"{checked} files checked: " +
          (f"{len(long_lines)} lines longer than {limit} columns" if long_lines else "ok"))
    return 1 if long_lines else 0


if __name__ == "__main__":
    sys.exit(main())
