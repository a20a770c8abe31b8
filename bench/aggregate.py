#!/usr/bin/env python3
"""Turns the benchmark's result lines into one markdown table and plots.

  aggregate.py --results RESULTS.jsonl --meta META.json --out DIR [--data DIR] [--png]

RESULTS.jsonl: one JSON object per run (warden_bench, warden_bench_ceiling,
peers/run.mjs, rescue.py); other lines are ignored. META.json: the machine,
versions and settings (bench/run.sh writes it). Prints the table and writes
DIR/latest.md, and, when gnuplot is there, DIR/latency.svg, DIR/rescue.svg
and DIR/backlog.svg (their data in --data DIR/plot-data/, default --out).
"""
import argparse
import json
import math
import os
import shutil
import statistics
import subprocess
import sys

SYSTEMS = ["warden-sqlite", "warden-pg", "graphile-worker", "pg-boss", "bullmq",
           "ceiling-sqlite", "ceiling-pg"]
WARDEN = ["warden-sqlite", "warden-pg"]
LABEL = {"warden-sqlite": "warden (SQLite)", "warden-pg": "warden (PostgreSQL)",
         "graphile-worker": "graphile-worker", "pg-boss": "pg-boss", "bullmq": "BullMQ",
         "ceiling-sqlite": "ceiling (SQLite)", "ceiling-pg": "ceiling (PostgreSQL)"}
SCENARIOS = [("bulk", "1. bulk enqueue"), ("throughput", "2. throughput"),
             ("latency", "3. latency, idle worker"), ("rescue", "4. rescue after SIGKILL"),
             ("backlog", "5. backlog"), ("ceiling", "6. ceiling")]
COLOR = {"warden-sqlite": "#1b7837", "warden-pg": "#5aae61", "graphile-worker": "#2166ac",
         "pg-boss": "#b2182b", "bullmq": "#e08214"}
VARIANT_ORDER = ["default", "tuned", "aggressive"]
METRIC_ORDER = ["jobs/s", "peak RSS", "p50", "p99", "max", "kill → rerun"]


def load(path):
    rows = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line.startswith("{"):
                continue
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError:
                continue
    return [r for r in rows if "scenario" in r and "system" in r]


def percentile(sorted_values, q):
    if not sorted_values:
        return math.nan
    k = (len(sorted_values) - 1) * q
    lo, hi = math.floor(k), math.ceil(k)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (k - lo)


def metrics(r):
    """The numbers of one run: [(metric, value, unit)]; None = timed out."""
    s = r["scenario"]
    if s in ("bulk", "backlog", "ceiling"):
        return [("jobs/s", r["jobs_per_s"], "jobs/s")]
    if s == "throughput":
        return [("jobs/s", r["jobs_per_s"], "jobs/s"), ("peak RSS", r["rss_mib"], "MiB")]
    if s == "latency":
        v = sorted(r["samples_ms"])
        return [("p50", percentile(v, 0.5), "ms"), ("p99", percentile(v, 0.99), "ms"),
                ("max", v[-1] if v else math.nan, "ms")]
    if s == "rescue":
        return [("kill → rerun", r.get("rescue_s"), "s")]
    return []


def fmt(v, unit):
    if v is None:
        return "—"
    if v == math.inf:
        return "timed out"
    if unit == "jobs/s":
        return f"{v:,.0f}" if v >= 10 else f"{v:.2g}"
    if unit == "MiB":
        return f"{v:.0f}"
    if v >= 100:
        return f"{v:,.0f}"
    if v >= 10:
        return f"{v:.1f}"
    return f"{v:.2f}" if v >= 0.1 else f"{v:.3f}"


def variant_key(v):
    if v in VARIANT_ORDER:
        return (0, VARIANT_ORDER.index(v), 0, v)
    if v.isdigit():
        return (1, 0, int(v), v)
    return (2, 0, 0, v)


class Cell:
    def __init__(self, values, unit, bound=None):
        self.unit = unit
        self.n = len(values)
        self.bound = bound
        # A timed-out rescue counts as infinitely slow for the median.
        self.values = sorted(math.inf if v is None else v for v in values)
        self.median = statistics.median(self.values) if values else None

    def text(self):
        if self.median == math.inf and self.bound:
            return f"> {self.bound:g} s (not rescued)"
        return f"{fmt(self.median, self.unit)} {self.unit}"

    def range(self):
        if self.n < 2:
            return ""
        lo, hi = self.values[0], self.values[-1]
        if hi == math.inf and self.bound:
            return f"{fmt(lo, self.unit)} – > {self.bound:g}"
        return f"{fmt(lo, self.unit)} – {fmt(hi, self.unit)}"


def group(rows):
    cells = {}
    settings = {}
    for r in rows:
        key = (r["scenario"], str(r.get("variant", "default")), r["system"])
        if r.get("settings"):
            settings[(r["system"], r["scenario"], key[1])] = r["settings"]
        for metric, value, unit in metrics(r):
            cells.setdefault(key + (metric,), ([], unit, r.get("bound_s")))[0].append(value)
    return {k: Cell(v, u, b) for k, (v, u, b) in cells.items()}, settings


def ratio(w, p):
    if w is None or p is None or w.median is None or p.median is None:
        return ""
    a, b = w.median, p.median
    if a == math.inf or b == 0:
        return ""
    if b == math.inf:  # the peer did not rescue by the bound
        return f"< {times(a / p.bound)}" if p.bound else ""
    return times(a / b)


def times(x):
    if x >= 100:
        return f"{x:,.0f}×"
    return f"{x:.2g}×" if x >= 0.01 else f"{x:.1g}×"


def warden_cell(cells, scenario, variant, system, metric):
    """The warden number a peer's or the ceiling's row is compared with."""
    if scenario == "rescue":
        variant = "default"
    if scenario != "ceiling":
        return cells.get((scenario, variant, system, metric))
    # Ceiling rows: insert ↔ bulk enqueue; claim-complete ↔ throughput
    # (tuned); a whole life ↔ warden's enqueue and processing in sequence.
    bulk = cells.get(("bulk", "batch 1000", system, "jobs/s"))
    tput = cells.get(("throughput", "tuned", system, "jobs/s"))
    if variant.startswith("insert"):
        return bulk
    if variant.startswith("claim-complete"):
        return tput
    if bulk and tput and bulk.median and tput.median:
        life = 1 / (1 / bulk.median + 1 / tput.median)
        return Cell([life], "jobs/s")
    return None


def table(cells):
    out = ["| scenario | settings | metric | system | median | min – max | runs | "
           "warden SQLite ÷ | warden PG ÷ |",
           "|---|---|---|---|---|---|---|---|---|"]
    for scenario, title in SCENARIOS:
        keys = sorted({(k[1], k[3]) for k in cells if k[0] == scenario},
                      key=lambda vm: (variant_key(vm[0]), METRIC_ORDER.index(vm[1])))
        for variant, metric in keys:
            for system in SYSTEMS:
                c = cells.get((scenario, variant, system, metric))
                if not c:
                    continue
                ratios = ["", ""]
                if system not in WARDEN:
                    for i, w in enumerate(WARDEN):
                        # The ceiling compares with warden on its own backend, at
                        # warden's batch size (1000).
                        if scenario == "ceiling" and (not system.endswith(w.split("-")[1])
                                                      or "B=1000" not in variant):
                            continue
                        ratios[i] = ratio(warden_cell(cells, scenario, variant, w, metric), c)
                out.append(f"| {title} | {variant} | {metric} | {LABEL[system]} | {c.text()} | "
                           f"{c.range()} | {c.n} | {ratios[0]} | {ratios[1]} |")
    return "\n".join(out)


def settings_section(settings):
    """One row per system and settings, with the scenarios that used them."""
    merged = {}
    for (system, scenario, variant), text in settings.items():
        if scenario == "backlog":
            variant = "tuned"  # the backlog rows are named by their size
        merged.setdefault((system, variant, text), set()).add(scenario)
    order = [s for s, _ in SCENARIOS]
    lines = ["| system | variant | settings | scenarios |", "|---|---|---|---|"]
    for (system, variant, text), scenarios in sorted(
            merged.items(), key=lambda kv: (SYSTEMS.index(kv[0][0]), variant_key(kv[0][1]),
                                            kv[0][2])):
        used = ", ".join(sorted(scenarios, key=order.index))
        lines.append(f"| {LABEL[system]} | {variant} | {text} | {used} |")
    return "\n".join(lines)


def meta_section(meta):
    m = meta.get("machine", {})
    v = meta.get("versions", {})
    s = meta.get("settings", {})
    lines = [f"- date: {meta.get('date', '?')}; mode: {meta.get('mode', '?')}; "
             f"command: `{meta.get('command', '?')}`",
             f"- machine: {m.get('nproc', '?')} CPUs ({m.get('cpu', '?')}), "
             f"{m.get('ram', '?')} RAM, kernel {m.get('kernel', '?')}, load before the run "
             f"{m.get('load', '?')}",
             "- versions: " + ", ".join(f"{k} {val}" for k, val in v.items()),
             "- settings: " + ", ".join(f"{k} {val}" for k, val in s.items())]
    return "\n".join(lines)


NOTES = """\
How to read it: each cell is the median of the runs (min – max beside it).
The ratio columns divide warden's median (same scenario and settings; in
the rescue rows warden at its defaults) by the row's: for jobs/s above 1×
favours warden, for ms, s and MiB below 1× does. Ceiling rows compare
warden with the raw SQL on its own backend: `insert` with bulk enqueue,
`claim-complete` with throughput (tuned), `life` with enqueue and
processing one after the other (1 / (1/bulk + 1/throughput)). A rescue
that had not happened by the bound counts as slower than any for the
median; the bound is shown instead of a number."""


def plots(rows, out_dir, data_dir, png=False):
    data = os.path.join(data_dir, "plot-data")
    os.makedirs(data, exist_ok=True)
    made = []
    # Latency: the cumulative distribution of every sample of every run.
    series = {}
    for r in rows:
        if r["scenario"] == "latency":
            series.setdefault((r["system"], r.get("variant", "default")), []).extend(r["samples_ms"])
    if series:
        plot = []
        for (system, variant), v in sorted(
                series.items(), key=lambda kv: (SYSTEMS.index(kv[0][0]), variant_key(kv[0][1]))):
            v = sorted(x for x in v if x > 0)
            name = os.path.join(data, f"latency-{system}-{variant}.dat")
            with open(name, "w") as f:
                for k, x in enumerate(v):
                    f.write(f"{x} {(k + 1) / len(v)}\n")
            dash = 1 if variant == "default" else 2
            plot.append(f"'{name}' using 1:2 with lines lw 2 dt {dash} lc rgb '{COLOR[system]}' "
                        f"title '{LABEL[system]} ({variant})'")
        made.append(("latency.svg", [
            "set title 'Enqueue to start, one job every 10 ms, idle worker (all runs)'",
            "set xlabel 'latency (ms, log scale)'", "set ylabel 'fraction of jobs'",
            "set logscale x", "set key outside right top", "set grid",
            "plot " + ", ".join(plot)]))
    # Rescue: every run, with the bound drawn for runs that timed out.
    rescue = [r for r in rows if r["scenario"] == "rescue"]
    if rescue:
        cats = sorted({(r["system"], r.get("variant", "default")) for r in rescue},
                      key=lambda sv: (SYSTEMS.index(sv[0]), variant_key(sv[1])))
        ok = os.path.join(data, "rescue-ok.dat")
        late = os.path.join(data, "rescue-timeout.dat")
        with open(ok, "w") as fo, open(late, "w") as fl:
            for r in rescue:
                x = cats.index((r["system"], r.get("variant", "default")))
                if r.get("rescue_s") is None:
                    fl.write(f"{x} {r['bound_s']}\n")
                else:
                    fo.write(f"{x} {max(r['rescue_s'], 1e-3)}\n")
        tics = ", ".join(f'"{LABEL[s]}\\n{v}" {i}' for i, (s, v) in enumerate(cats))
        made.append(("rescue.svg", [
            "set title 'SIGKILL of the worker running a 60 s job: time until it runs again'",
            "set ylabel 'seconds (log scale)'", "set logscale y", "set grid ytics",
            f"set xtics ({tics}) font ',9'", f"set xrange [-0.5:{len(cats) - 0.5}]",
            "set key top left", "set bmargin 4",
            f"plot '{ok}' using 1:2 with points pt 7 ps 1.2 title 'rerun', "
            f"'{late}' using 1:2 with points pt 9 ps 1.5 title 'not rerun by the bound'"]))
    # Backlog: jobs/s against the number of jobs queued.
    backlog = {}
    for r in rows:
        if r["scenario"] == "backlog":
            backlog.setdefault(r["system"], {}).setdefault(r["backlog"], []).append(r["jobs_per_s"])
    if backlog:
        plot = []
        for system, by_size in sorted(backlog.items(), key=lambda kv: SYSTEMS.index(kv[0])):
            name = os.path.join(data, f"backlog-{system}.dat")
            with open(name, "w") as f:
                for size in sorted(by_size):
                    f.write(f"{size} {statistics.median(by_size[size])}\n")
            plot.append(f"'{name}' using 1:2 with linespoints lw 2 pt 7 title '{LABEL[system]}'")
        made.append(("backlog.svg", [
            "set title 'Throughput with a backlog (median of runs)'",
            "set xlabel 'jobs queued (log scale)'", "set ylabel 'jobs/s'", "set logscale x",
            "set grid", "set key outside right", "plot " + ", ".join(plot)]))
    written = []
    if not shutil.which("gnuplot"):
        print("aggregate: gnuplot not found; no plots", file=sys.stderr)
        return written
    for name, script in made:
        if png:
            name = name.replace(".svg", ".png")
        path = os.path.join(out_dir, name)
        term = ("set terminal pngcairo size 1000,560 font 'sans,10'" if png else
                "set terminal svg size 1000,560 dynamic font 'sans,12' background rgb 'white'")
        full = [term, f"set output '{path}'"] + script
        p = subprocess.run(["gnuplot"], input="\n".join(full) + "\n", text=True,
                           capture_output=True)
        if p.returncode == 0:
            written.append(name)
        else:
            print(f"aggregate: gnuplot failed for {name}: {p.stderr}", file=sys.stderr)
    return written


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--results", required=True)
    p.add_argument("--meta")
    p.add_argument("--out", required=True)
    p.add_argument("--data", help="where the plots' data go (default: --out)")
    p.add_argument("--png", action="store_true", help="PNG plots instead of SVG (to preview)")
    a = p.parse_args()
    rows = load(a.results)
    meta = {}
    if a.meta and os.path.exists(a.meta):
        with open(a.meta) as f:
            meta = json.load(f)
    cells, settings = group(rows)
    os.makedirs(a.out, exist_ok=True)
    tab = table(cells)
    print(tab)
    written = plots(rows, a.out, a.data or a.out, a.png)
    doc = ["# warden and its peers: benchmark results", "",
           "Written by `bench/run.sh` (see bench/README.md for the scenarios).", "",
           meta_section(meta), "", tab, "", NOTES, "", "## Settings of each system", "",
           settings_section(settings), ""]
    if written:
        doc += ["## Plots", ""] + [f"![{w}]({w})" for w in written] + [""]
    failures = meta.get("failures", [])
    if failures:
        doc += ["## Runs that failed", ""] + [f"- {f}" for f in failures] + [""]
    with open(os.path.join(a.out, "latest.md"), "w") as f:
        f.write("\n".join(doc))


if __name__ == "__main__":
    main()
