#!/usr/bin/env python3
"""Checks the relative links of every tracked Markdown file.

    scripts/check-links.py [--allow-missing PATH]... [--root DIR]

For each `*.md` file git tracks, or that is new and not ignored (outside
node_modules), every Markdown link
`[text](target)` (images included) and reference definition `[label]: target`
whose target is relative (not http:, https:, mailto: or another scheme) must
name a file or directory that exists inside the repository; when it carries
`#anchor`, a Markdown target (or the file itself, for `#anchor` alone) must
have a heading whose GitHub-style slug is the anchor (lowercase; spaces to
'-'; punctuation other than '-' and '_' dropped; a repeated heading gets -1,
-2, ...), or an HTML anchor (`<a name="...">`, `id="..."`) of that name.
Links inside code (fenced blocks, inline spans) are not links and are skipped.

--allow-missing PATH (repository-relative, repeatable): a link to PATH while
the file does not exist yet is listed as a warning, not a failure.

Exit status: 0 when every link resolves, 1 listing every broken one.
Python 3 standard library only.
"""
import argparse
import os
import re
import subprocess
import sys
import urllib.parse

SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
REF_DEF = re.compile(r"^ {0,3}\[([^\]]+)\]:[ \t]*(<[^>]*>|\S+)")
HTML_ANCHOR = re.compile(r"""<a\s[^>]*?(?:name|id)\s*=\s*["']([^"']+)["']""", re.I)
INLINE_LINK = re.compile(r"\[([^\]]*)\]\(([^)]*)\)")


def strip_inline_code(line):
    """Blanks inline code spans (`x`, ``x``), keeping the line's length."""
    out, i, n = [], 0, len(line)
    while i < n:
        if line[i] == "`":
            j = i
            while j < n and line[j] == "`":
                j += 1
            ticks = line[i:j]
            end = line.find(ticks, j)
            # A closing run must be exactly as long as the opening one.
            while end != -1 and end + len(ticks) < n and line[end + len(ticks)] == "`":
                end = line.find(ticks, end + len(ticks) + 1)
            if end == -1:
                out.append(line[i:j])
                i = j
                continue
            out.append(" " * (end + len(ticks) - i))
            i = end + len(ticks)
        else:
            out.append(line[i])
            i += 1
    return "".join(out)


def prose_lines(text):
    """Yields (line number, line) outside fenced code blocks."""
    fence = None
    for n, line in enumerate(text.split("\n"), 1):
        m = FENCE.match(line)
        if fence is None:
            if m:
                fence = m.group(1)
                continue
            yield n, line
        elif m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence) \
                and line.strip().strip(fence[0]) == "":
            fence = None


def slug(heading):
    """GitHub's anchor for a heading's text."""
    text = INLINE_LINK.sub(r"\1", heading)           # a link's text only
    text = re.sub(r"<[^>]+>", "", text)              # inline HTML tags
    text = text.strip().lower()
    text = "".join(c for c in text if c.isalnum() or c in " -_")
    return text.replace(" ", "-")


_anchor_cache = {}


def anchors_of(path):
    """Every anchor a Markdown file defines: heading slugs and HTML anchors."""
    if path in _anchor_cache:
        return _anchor_cache[path]
    with open(path, encoding="utf-8") as f:
        text = f.read()
    found, seen = set(), {}
    for _, line in prose_lines(text):
        m = ATX.match(line)
        if m:
            base = slug(m.group(2) or "")
            count = seen.get(base, 0)
            seen[base] = count + 1
            found.add(base if count == 0 else f"{base}-{count}")
        for a in HTML_ANCHOR.findall(line):
            found.add(a)
    _anchor_cache[path] = found
    return found


def split_target(raw):
    """The link's destination without its title, angle brackets or spaces."""
    raw = raw.strip()
    if raw.startswith("<"):
        end = raw.find(">")
        return raw[1:end] if end != -1 else raw[1:]
    return raw.split()[0] if raw else ""


def links_in(text):
    """Yields (line number, text, target) for every link outside code.

    A link's text may run over several lines of a paragraph, so the prose
    is scanned whole (fenced blocks blanked, line numbers kept)."""
    lines = text.split("\n")
    prose = [""] * len(lines)
    for n, line in prose_lines(text):
        m = REF_DEF.match(line)
        if m:
            yield n, m.group(1), split_target(m.group(2))
            continue
        prose[n - 1] = line
    body = strip_inline_code("\n".join(prose))
    i = 0
    while True:
        i = body.find("](", i)
        if i == -1:
            break
        # The link text: back to the '[' that opens it, within its paragraph.
        depth, j = 0, i - 1
        while j >= 0 and not body.startswith("\n\n", j - 1):
            if body[j] == "]":
                depth += 1
            elif body[j] == "[":
                if depth == 0:
                    break
                depth -= 1
            j -= 1
        # The destination: up to the ')' that closes it, on the same line.
        depth, k = 0, i + 2
        while k < len(body) and body[k] != "\n":
            if body[k] == "(":
                depth += 1
            elif body[k] == ")":
                if depth == 0:
                    break
                depth -= 1
            k += 1
        if j >= 0 and body[j] == "[" and k < len(body) and body[k] == ")":
            label = " ".join(body[j + 1:i].split())
            yield body.count("\n", 0, i) + 1, label, split_target(body[i + 2:k])
        i += 2


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--allow-missing", action="append", default=[], metavar="PATH",
                        help="a repository-relative file that may not exist yet")
    parser.add_argument("--root", help="the repository (default: this script's)")
    args = parser.parse_args()

    root = os.path.realpath(args.root or os.path.join(os.path.dirname(__file__), ".."))
    allowed = {os.path.normpath(p) for p in args.allow_missing}
    # Tracked files, and new ones not yet added (but not ignored ones).
    files = subprocess.run(["git", "-C", root, "ls-files", "-z", "--cached", "--others",
                            "--exclude-standard", "--", "*.md"],
                           check=True, capture_output=True, text=True).stdout.split("\0")
    files = [f for f in files if f and "node_modules" not in f.split("/")]

    broken, warnings, checked = [], [], 0
    for rel in files:
        path = os.path.join(root, rel)
        if not os.path.exists(path):   # deleted in the work tree, not yet in git
            continue
        with open(path, encoding="utf-8") as f:
            text = f.read()
        for n, label, target in sorted(links_in(text)):
            if not target or SCHEME.match(target):
                continue
            checked += 1
            where = f"{rel}:{n}: [{label}]({target})"
            file_part, _, anchor = target.partition("#")
            file_part = urllib.parse.unquote(file_part)
            anchor = urllib.parse.unquote(anchor)
            if file_part:
                dest = os.path.normpath(os.path.join(os.path.dirname(path), file_part))
            else:
                dest = path
            dest_rel = os.path.relpath(dest, root)
            if dest_rel == ".." or dest_rel.startswith(".." + os.sep):
                broken.append(f"{where}: leaves the repository ({dest_rel})")
                continue
            if not os.path.exists(dest):
                if dest_rel in allowed:
                    warnings.append(f"{where}: {dest_rel} does not exist yet (allowed)")
                else:
                    broken.append(f"{where}: no such file: {dest_rel}")
                continue
            if anchor and dest.endswith(".md") and os.path.isfile(dest):
                if anchor not in anchors_of(dest):
                    broken.append(f"{where}: {dest_rel} has no heading #{anchor}")

    for w in warnings:
        print(f"warning: {w}")
    for b in broken:
        print(b)
    print(f"check-links: {len(files)} files, {checked} relative links, "
          f"{len(broken)} broken, {len(warnings)} allowed missing")
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
