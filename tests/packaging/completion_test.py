#!/usr/bin/env python3
"""The bash completion, in a real bash, against the binary's own --help.

    completion_test.py WARDEN COMPLETION_SCRIPT

Sources the script in `bash --norc`, checks that it registered itself
(`complete -p warden`), then, for every command path that `warden --help`
lists (help_tree.py), completes the first letters of each subcommand and
`--` after the command, and checks that every subcommand and every flag of
that command is offered; also the values of a few flags, a flag's value
skipped on the way to a subcommand, and the file names of `--db`,
`--config` and `config check`. The function runs as bash runs it for a
Tab: COMP_WORDS and COMP_CWORD set, COMPREPLY read back.
"""
import os
import shlex
import subprocess
import sys
import tempfile

from help_tree import commands


def main():
    warden, script = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    tree = commands(warden)
    cases = []  # (words, expected in COMPREPLY, exactly?)
    takes_a_file = {("config", "check")}  # offers file names (a case below)
    for c in tree:
        base = ["warden", *c.path]
        for sub in c.subcommands:
            cases.append((base + [sub[:2]], {sub}, False))
        if c.path not in takes_a_file:
            cases.append((base + [""], set(c.subcommands), True))
        cases.append((base + ["--"], set(c.flags) | {"--help"}, False))
    cases += [
        (["warden", "jobs", "--state", "de"], {"dead"}, True),
        (["warden", "worker", "--log-level", ""], {"error", "warn", "info", "debug"}, True),
        (["warden", "wait", "--log-format", ""], {"text", "json"}, True),
        (["warden", "demo", "--log-format", "j"], {"json"}, True),
        (["warden", "tokens", "create", "--scope", "op"], {"operate"}, True),
        (["warden", "add", "--retry", "f"], {"forever"}, True),
        # --db's value is skipped, not taken for a command; --queue's too.
        (["warden", "--db", "jobs", "jobs", "sh"], {"show"}, True),
        (["warden", "jobs", "--queue", "retry", "--wi"], {"--wide"}, True),
    ]
    with tempfile.TemporaryDirectory() as tmp:
        open(os.path.join(tmp, "queue.db"), "w").close()
        cases.append((["warden", "--db", "que"], {"queue.db"}, True))
        cases.append((["warden", "--config", "que"], {"queue.db"}, True))
        cases.append((["warden", "config", "check", "que"], {"queue.db"}, True))
        lines = [f"source {shlex.quote(script)}",
                 "complete -p warden || exit 3",
                 "run() { COMP_WORDS=(\"$@\"); COMP_CWORD=$(($# - 1)); COMPREPLY=(); _warden; "
                 "printf '%s\\n' \"${COMPREPLY[*]}\"; }"]
        for words, _, _ in cases:
            lines.append("run " + " ".join(shlex.quote(w) for w in words))
        # `warden` on PATH is the binary under test.
        bin_dir = os.path.join(tmp, "bin")
        os.mkdir(bin_dir)
        os.symlink(warden, os.path.join(bin_dir, "warden"))
        env = dict(os.environ, PATH=bin_dir + os.pathsep + os.environ["PATH"])
        out = subprocess.run(["bash", "--norc", "--noprofile", "-c", "\n".join(lines)],
                             capture_output=True, text=True, cwd=tmp, env=env, timeout=120)
    if out.returncode != 0:
        print(f"bash exited {out.returncode}: {out.stderr}")
        return 1
    got = out.stdout.splitlines()
    if not got or got[0] != "complete -F _warden warden":
        print(f"the script did not register _warden for warden: {got[:1]}")
        return 1
    failures = []
    for (words, want, exact), line in zip(cases, got[1:]):
        offered = set(line.split())
        shown = " ".join(words[:-1]) + f" {words[-1]}<Tab>"
        if exact and offered != want:
            failures.append(f"{shown}: offered {sorted(offered)}, expected {sorted(want)}")
        elif not exact and not want <= offered:
            failures.append(f"{shown}: missing {sorted(want - offered)}")
    if len(got) - 1 != len(cases):
        failures.append(f"{len(cases)} completions run, {len(got) - 1} answered: {out.stderr}")
    if failures:
        print("\n".join(failures))
        return 1
    print(f"bash completion: {len(cases)} completions of {len(tree)} commands, all as expected")
    return 0


if __name__ == "__main__":
    sys.exit(main())
