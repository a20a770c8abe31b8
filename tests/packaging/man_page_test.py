#!/usr/bin/env python3
"""The man page cannot drift from the CLI.

    man_page_test.py WARDEN MAN_PAGE

Fails when a command or subcommand that `warden --help` lists (help_tree.py)
has no `.SS "warden COMMAND ..."` heading in the page, when a flag of a
command appears neither in that command's sections nor in its parent's
(`jobs retry` shares the filter flags of `jobs`), when a flag of the top
level is missing from OPTIONS, or when a heading names a command that
warden does not have. It also runs groff's checks on the page, when groff is
installed (man-db's groff-base).
"""
import re
import shutil
import subprocess
import sys

from help_tree import commands


def plain(troff):
    """The text of troff source, for matching: fonts dropped, \\- as -."""
    text = re.sub(r"\\f(\[[A-Z]*\]|[BIRP])", "", troff)
    return text.replace("\\-", "-").replace("\\(em", "-").replace('"', "")


def sections(page):
    """{path: text} for each `.SS "warden ..."` heading (one path may have
    several), and the text of `.SH OPTIONS`."""
    by_path, options, current, bad = {}, [], None, []
    for line in page.splitlines():
        if line.startswith(".SH"):
            current = options if line.split()[1:2] == ["OPTIONS"] else None
            continue
        if line.startswith(".SS"):
            words = plain(line[3:]).split()
            if not words or words[0] != "warden":
                current = None
                continue
            path = []
            for w in words[1:]:
                if not re.fullmatch(r"[a-z][a-z-]*", w):
                    break  # a placeholder (ID, FILTER), a flag or [...]
                path.append(w)
            current = by_path.setdefault(tuple(path), [])
            current.append(plain(line))
            continue
        if current is not None:
            current.append(plain(line))
    return {p: "\n".join(t) for p, t in by_path.items()}, "\n".join(options)


def mentions(text, flag):
    return re.search(re.escape(flag) + r"(?![\w-])", text) is not None


def main():
    warden, man_page = sys.argv[1], sys.argv[2]
    with open(man_page, encoding="utf-8") as f:
        page = f.read()
    by_path, options = sections(page)
    tree = commands(warden)
    known = {c.path for c in tree}
    failures = []
    for c in tree:
        name = " ".join(("warden",) + c.path)
        if not c.path:
            for flag in c.flags:
                if not mentions(options, flag):
                    failures.append(f"{flag} (a flag of warden) is not in OPTIONS")
            continue
        if c.path not in by_path:
            failures.append(f"'{name}' has no heading: add .SS \"{name} ...\"")
            continue
        text = by_path[c.path] + "\n" + by_path.get(c.path[:-1], "")
        for flag in c.flags:
            if not mentions(text, flag):
                failures.append(f"{flag} (a flag of '{name}') is in neither its section nor "
                                "its parent's")
    for path in by_path:
        if path and path not in known:
            failures.append(f"the heading 'warden {' '.join(path)}' names no command of "
                            f"{warden}")
    groff = shutil.which("groff")
    if groff:
        out = subprocess.run([groff, "-man", "-ww", "-z", man_page], capture_output=True,
                             text=True)
        if out.returncode != 0 or out.stderr.strip():
            failures.append("groff -man -ww: " + out.stderr.strip())
    flags = sum(len(c.flags) for c in tree)
    if failures:
        print("\n".join(failures))
        print(f"man page: {len(failures)} problems ({man_page})")
        return 1
    print(f"man page: {len(tree) - 1} commands and {flags} flags of {warden}, all in it")
    return 0


if __name__ == "__main__":
    sys.exit(main())
