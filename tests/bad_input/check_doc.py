#!/usr/bin/env python3
"""Checks docs/bad-input.md against the tests, so that its tables cannot drift.

A ctest (`bad_input_doc`, tests/bad_input/CMakeLists.txt) that runs after
every bad_input_test case (a ctest fixture), in each tree that builds
bad_input_test. It fails when:

  (a) a test the "test" column names does not exist (each name is checked
      against `--gtest_list_tests` of bad_input_test, integration_test, store_test and
      core_test; `fuzz target NAME` against fuzz/NAME_fuzz.cc);
  (b) a bad_input_test test is named by no row (a new test needs its row);
  (c) a message the "what warden answers" column quotes as `warden: ...` is
      not printed, with the exit status the row claims (the last `exit N`
      before it in the cell), by any run of the row's own bad_input_test
      tests. Those tests append every CLI run (exit status, stderr) to
      $WARDEN_BAD_INPUT_LOG (BadInputTest::LogRun), and this script reads it.
      In a quoted message `…` stands for any text, `PATH` for any text and
      `N` for a number; `...` is literal (warden's own mark for cut text).
      A quote may be the start of the line: it must match from `warden: `;
  (d) a bad input written as a whole command (`warden add t '{bad'`, with no
      placeholder such as SHELL) was not run by the row's tests with the
      row's exit status: 0 when the answer starts with "accepted", else the
      first `exit N` in it. A row that says a refused input is accepted fails.

Messages of rows proved only by integration_test are not checked against a
run (their test names are); they are listed. When the row's bad_input tests
did not run (skipped: no PostgreSQL, not root), a message is unverified:
exit 77 (ctest: skipped), except under CI=true, where it fails.

Run it through ctest from a build tree: `ctest -R bad_input_doc` (ctest
then runs bad_input_test first).
"""

import argparse
import difflib
import glob
import json
import os
import re
import shlex
import subprocess
import sys

SKIP = 77


def code_spans(text):
    """(start, content) of each `code span`; \\` inside one is a backtick."""
    spans, i = [], 0
    while True:
        start = text.find("`", i)
        while start > 0 and text[start - 1] == "\\":
            start = text.find("`", start + 1)
        if start < 0:
            return spans
        end = start + 1
        while True:
            end = text.find("`", end)
            if end < 0:
                return spans
            if text[end - 1] != "\\":
                break
            end += 1
        spans.append((start, text[start + 1:end].replace("\\`", "`")))
        i = end + 1


def split_row(line):
    """Cells of a table row; a `|` inside a code span does not split."""
    cells, cell, in_code, i = [], "", False, 0
    body = line.strip()[1:-1] if line.strip().endswith("|") else line.strip()[1:]
    while i < len(body):
        c = body[i]
        if c == "\\" and i + 1 < len(body):
            cell += body[i:i + 2]
            i += 2
            continue
        if c == "`":
            in_code = not in_code
        if c == "|" and not in_code:
            cells.append(cell.strip())
            cell = ""
        else:
            cell += c
        i += 1
    cells.append(cell.strip())
    return cells


class Row:
    def __init__(self, line_no, cells, suite, section):
        self.line_no, self.cells, self.suite, self.section = line_no, cells, suite, section
        self.refs = []  # test name patterns (regexes)
        self.ref_texts = []
        self.unknown = False  # names a test that does not exist (already a failure)


def parse_doc(path):
    """Rows of every table whose header is `bad input | what warden answers | test...`."""
    rows, section, suite, in_table = [], "", None, False
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    for no, line in enumerate(lines, 1):
        if line.startswith("#"):
            section, in_table = line.strip("# "), False
            continue
        if not line.startswith("|"):
            in_table = False
            continue
        cells = split_row(line)
        if len(cells) >= 3 and cells[0] == "bad input" and cells[1] == "what warden answers":
            in_table = True
            spans = code_spans(cells[2])
            suite = spans[0][1].rstrip(".") if spans else None
            continue
        if not in_table or set(line) <= set("|-: "):
            continue
        rows.append(Row(no, cells, suite, section))
    return rows


def glob_to_regex(pattern):
    return "".join(".*" if c == "*" else re.escape(c) for c in pattern)


def ref_regex(ref):
    """A doc test name ([Suite.]Test[/param], globs) as a regex over gtest
    full names, which may add an instantiation prefix `Inst/` and a
    parameter suffix `/param`."""
    suite, _, test = ref.partition(".")
    rx = "(?:[^/.]+/)?" + glob_to_regex(suite) + r"\." + glob_to_regex(test)
    if "/" not in test:
        rx += "(?:/[^/]+)?"
    return re.compile(rx)


def expand_braces(text):
    m = re.search(r"\{([^{}]*)\}", text)
    if not m:
        return [text]
    out = []
    for alt in m.group(1).split(","):
        out += expand_braces(text[:m.start()] + alt.strip() + text[m.end():])
    return out


def list_tests(binary):
    out = subprocess.run([binary, "--gtest_list_tests"], check=True, capture_output=True,
                         text=True, timeout=60).stdout
    names, suite = [], ""
    for line in out.splitlines():
        if not line.strip() or line.startswith("Running main"):
            continue
        if not line.startswith(" "):
            suite = line.split("#")[0].strip()
        else:
            names.append(suite + line.split("#")[0].strip())
    return names


def message_regex(message):
    """`warden: ...` as quoted in the doc: a regex matching a stderr line from
    its start. `…` and PATH: any text; N: a number."""
    rx = ""
    for token in re.split(r"(…|\bPATH\b|\bN\b)", message):
        if token == "…" or token == "PATH":
            rx += ".*?"
        elif token == "N":
            rx += "[0-9]+"
        else:
            rx += re.escape(token)
    return re.compile("^" + rx, re.MULTILINE)


def read_log(log_dir):
    runs, ran = [], {}  # ran: test -> skipped?
    for path in sorted(glob.glob(os.path.join(log_dir, "*.jsonl"))):
        with open(path, encoding="utf-8") as f:
            for line in f:
                record = json.loads(line)
                if "skipped" in record:
                    ran[record["test"]] = ran.get(record["test"], True) and record["skipped"]
                else:
                    runs.append(record)
    return runs, ran


def command_args(argv):
    """A logged run's arguments after `--db DB`, without --json."""
    if "--db" not in argv:
        return None
    return [a for a in argv[argv.index("--db") + 2:] if a != "--json"]


def in_ci():
    return os.environ.get("CI", "") not in ("", "false", "0")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--doc", required=True)
    ap.add_argument("--log", required=True, help="the WARDEN_BAD_INPUT_LOG directory")
    ap.add_argument("--fuzz-dir", required=True)
    ap.add_argument("--binary", action="append", default=[], metavar="NAME=PATH",
                    help="a test binary; the first is the one whose tests every row must cover")
    args = ap.parse_args()

    binaries = [b.split("=", 1) for b in args.binary]
    tests = {name: list_tests(path) for name, path in binaries}
    checked_binary = binaries[0][0]
    all_tests = [t for names in tests.values() for t in names]
    failures, unverified, unchecked = [], [], []

    def fail(row, what):
        failures.append(f"{args.doc}:{row.line_no} ({row.section}): {what}")

    rows = parse_doc(args.doc)
    previous = None
    for row in rows:
        if len(row.cells) != 3:
            fail(row, f"{len(row.cells)} cells, not 3")
            continue
        cell = row.cells[2]
        if re.match(r"same\b", cell) and previous is not None:  # the row above's, and more
            row.refs, row.ref_texts = list(previous.refs), list(previous.ref_texts)
        for start, span in code_spans(cell):
            if span in tests:
                continue  # `integration_test`: says where the next names are
            if cell[:start].rstrip().endswith("fuzz target"):
                if not os.path.exists(os.path.join(args.fuzz_dir, span + "_fuzz.cc")):
                    fail(row, f"no fuzz target `{span}` ({args.fuzz_dir}/{span}_fuzz.cc)")
                continue
            for ref in expand_braces(span):
                if "." not in ref:
                    if not row.suite:
                        fail(row, f"`{ref}` names no suite, and the table's header gives none")
                        continue
                    ref = row.suite + "." + ref
                rx = ref_regex(ref)
                if not any(rx.fullmatch(t) for t in all_tests):
                    fail(row, f"no test `{ref}` in {', '.join(tests)}")
                    row.unknown = True
                row.refs.append(rx)
                row.ref_texts.append(ref)
        if not row.refs:
            fail(row, "names no test (`same` at its start: the row above's)")
        previous = row

    # (b) Every test of the checked binary has its row.
    covered = set()
    for row in rows:
        covered |= {t for t in tests[checked_binary] if any(rx.fullmatch(t) for rx in row.refs)}
    for t in tests[checked_binary]:
        if t not in covered:
            failures.append(f"{args.doc}: no row names {checked_binary}'s test {t}")

    # (c) Every quoted `warden: ` message, from a run of the row's own tests.
    runs, ran = read_log(args.log)
    messages = 0
    for row in rows:
        mine = {t for t in tests[checked_binary] if any(rx.fullmatch(t) for rx in row.refs)}
        answer = row.cells[1]
        for start, span in code_spans(answer):
            if not span.startswith("warden: "):
                continue
            messages += 1
            exits = re.findall(r"\bexits? ([0-9]+)", answer[:start])
            if not exits:
                fail(row, f"`{span}`: no `exit N` before it says its exit status")
                continue
            status = int(exits[-1])
            if row.unknown:
                continue  # its tests are wrong: fix them first
            if not mine:
                unchecked.append(f"{args.doc}:{row.line_no}: `{span}` "
                                 f"(proved in {', '.join(row.ref_texts)})")
                continue
            if not any(ran.get(t) is False for t in mine):
                unverified.append(f"{args.doc}:{row.line_no}: `{span}` (none of its tests ran "
                                  f"unskipped under ctest: {', '.join(sorted(mine))})")
                continue
            rx = message_regex(span)
            if any(r["test"] in mine and r["exit"] == status and rx.search(r["stderr"])
                   for r in runs):
                continue
            said = {f"exit {r['exit']}: {r['stderr'].strip()[:160]}"
                    for r in runs if r["test"] in mine and r["exit"] != 0}
            closest = difflib.get_close_matches(f"exit {status}: {span}", said, n=5, cutoff=0)
            fail(row, f"no run of its tests printed `{span}` with exit {status}; "
                      f"the closest they printed:\n      " + "\n      ".join(closest))

    # (d) A bad input written as a whole command (`warden add t '{bad'`) was
    # run by the row's own tests, with the row's exit status: 0 when the
    # answer starts with "accepted", else the first `exit N` in it.
    commands = 0
    for row in rows:
        mine = {t for t in tests[checked_binary] if any(rx.fullmatch(t) for rx in row.refs)}
        if row.unknown or not mine or len(row.cells) != 3:
            continue
        answer = row.cells[1]
        exits = re.findall(r"\bexits? ([0-9]+)", answer)
        status = 0 if re.match(r"accepted\b", answer) else int(exits[0]) if exits else None
        for _, span in code_spans(row.cells[0]):
            if not span.startswith("warden ") or status is None:
                continue
            try:
                words = shlex.split(span)[1:]
            except ValueError:
                continue
            if any(re.fullmatch(r"[A-Z]+", w) for w in words):
                continue  # a placeholder (SHELL, K): not a command as run
            commands += 1
            words = [w[:200] for w in words if w != "--json"]
            if not any(ran.get(t) is False for t in mine):
                unverified.append(f"{args.doc}:{row.line_no}: `{span}` (none of its tests ran "
                                  "unskipped under ctest)")
                continue
            if any(r["test"] in mine and r["exit"] == status and command_args(r["argv"]) == words
                   for r in runs):
                continue
            got = sorted({r["exit"] for r in runs
                          if r["test"] in mine and command_args(r["argv"]) == words})
            fail(row, f"no run of its tests ran `{span}` with exit {status}"
                      + (f" (it exits {', '.join(map(str, got))})" if got else " (never run)"))

    print(f"{args.doc}: {len(rows)} rows, {sum(len(r.refs) for r in rows)} test names, "
          f"{messages} quoted `warden: ` messages, {commands} commands, "
          f"{len(runs)} logged CLI runs of {sum(1 for s in ran.values() if not s)} tests")
    if unchecked:
        print("not checked against a run (their tests are not in "
              f"{checked_binary}):\n  " + "\n  ".join(unchecked))
    if unverified:
        print("unverified:\n  " + "\n  ".join(unverified))
    if failures:
        print("FAILED:\n  " + "\n  ".join(failures))
        return 1
    if unverified:
        if in_ci():
            print("CI=true: every message must be verified")
            return 1
        return SKIP
    return 0


if __name__ == "__main__":
    sys.exit(main())
