"""The commands and flags of a `warden` binary, read from its --help.

What the man page (man_page_test.py) and the bash completion
(completion_test.py) are checked against: whatever `warden --help` lists,
and recursively each command's own --help, so that a command or flag added
to the CLI reaches both checks with no list to update.
"""
import re
import subprocess

OPTION = re.compile(r"^  (?:-\w,)?(--[\w-]+)( [A-Z]+(?:[:= ]|$))?")
SUBCOMMAND = re.compile(r"^  ([\w-]+)")


class Command:
    def __init__(self, path, flags, valued, subcommands):
        self.path = path                # ("jobs", "retry"); () is the top level
        self.flags = flags              # every flag but --help, in --help's order
        self.valued = valued            # the flags that take a value
        self.subcommands = subcommands  # names


def parse_help(text):
    section, flags, valued, subs = None, [], set(), []
    for line in text.splitlines():
        if line and not line[0].isspace():
            section = line[:-1] if line.endswith(":") else None
            continue
        if section == "Options":
            m = OPTION.match(line)
            if m and m.group(1) != "--help":
                flags.append(m.group(1))
                if m.group(2):
                    valued.add(m.group(1))
        elif section == "Subcommands":
            m = SUBCOMMAND.match(line)
            if m:
                subs.append(m.group(1))
    return flags, valued, subs


def commands(warden, path=()):
    """Every command of `warden`, the top level first, as Command objects."""
    out = subprocess.run([warden, *path, "--help"], capture_output=True, text=True,
                         timeout=30)
    if out.returncode != 0:
        raise RuntimeError(f"{' '.join([warden, *path])} --help: exit {out.returncode}: "
                           f"{out.stderr.strip()}")
    flags, valued, subs = parse_help(out.stdout)
    found = [Command(path, flags, valued, subs)]
    for sub in subs:
        found += commands(warden, path + (sub,))
    return found
