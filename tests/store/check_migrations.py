#!/usr/bin/env python3
"""Migrations that have shipped never change (src/store/migrations.h).

Each backend's files under src/store/migrations/BACKEND/ are numbered
0001, 0002, ... without a gap, and SHA256SUMS lists every one with its
hash. It fails, naming the file, when a listed migration's bytes changed
(write a new migration instead), when a file is not listed (a new
migration: add its line with `sha256sum BACKEND/NNNN_what.sql >>
SHA256SUMS` in that directory), or when a listed file is gone.

    tests/store/check_migrations.py [MIGRATIONS_DIR]
"""
import hashlib
import os
import re
import sys

NAME = re.compile(r"^(\d{4})_[a-z0-9_]+\.sql$")


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "..", "src", "store", "migrations")
    listed = {}
    with open(os.path.join(root, "SHA256SUMS"), encoding="utf-8") as f:
        for line in f:
            digest, path = line.split()
            listed[path] = digest
    failures = []
    found = set()
    for backend in sorted(d for d in os.listdir(root) if os.path.isdir(os.path.join(root, d))):
        names = sorted(os.listdir(os.path.join(root, backend)))
        for i, name in enumerate(names, 1):
            path = f"{backend}/{name}"
            found.add(path)
            m = NAME.match(name)
            if not m:
                failures.append(f"{path}: a migration is named NNNN_what.sql (lower case)")
                continue
            if int(m.group(1)) != i:
                failures.append(f"{path}: numbered {int(m.group(1))} where {i} was due "
                                "(no gaps, no repeats)")
            with open(os.path.join(root, path), "rb") as f:
                digest = hashlib.sha256(f.read()).hexdigest()
            if path not in listed:
                failures.append(f"{path}: not in SHA256SUMS (a new migration: add its line)")
            elif listed[path] != digest:
                failures.append(f"{path}: changed since it was listed; a migration that has "
                                "shipped never changes: write a new one")
    for path in sorted(set(listed) - found):
        failures.append(f"{path}: listed in SHA256SUMS but gone")
    for f in failures:
        print(f)
    print(f"{len(found)} migrations checked: " + ("FAILED" if failures else "ok"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
