#!/usr/bin/env python3
"""The table of bench/http.sh: reads the JSON lines bench/http_bench.py wrote and
the run's metadata, prints one markdown document and writes it to --out.

  bench/http_table.py --results FILE --meta META.json --out FILE.md

Each figure: the median of its runs and min - max, per backend. A ratio
(HTTP batch to the library; worker with the 1 Hz scraper to without) is
the ratio of the two medians, and its min - max is that of the runs' own
ratios, each run's pair measured one after the other.
"""
import argparse
import json
import statistics
from collections import defaultdict

BACKENDS = [("warden-sqlite", "SQLite"), ("warden-pg", "PostgreSQL")]
SCENARIOS = [
    ("enqueue", "single-job `POST /v1/jobs`, wrk, kept-alive connections"),
    ("batch", "batch enqueue: `POST /v1/jobs/batch` against the library"),
    ("metrics", "`GET /metrics`, then `GET /v1/stats`, one request after another; "
                "the dashboard's first load in Chromium"),
    ("scrape-cost", "a worker with and without a 1 Hz `/metrics` scraper"),
    ("rss", "`warden serve` RSS, MiB"),
]
# A ratio row: (scenario, numerator figure, denominator figure, label).
RATIOS = [
    ("batch", "HTTP jobs/s", "library jobs/s", "HTTP ÷ library"),
    ("scrape-cost", "worker jobs/s, 1 Hz scraper", "worker jobs/s, no scraper",
     "with ÷ without the scraper"),
]


def num(v):
    if v >= 100:
        return f"{v:,.0f}"
    if v >= 10:
        return f"{v:.1f}"
    return f"{v:.2f}"


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--results", required=True)
    p.add_argument("--meta", required=True)
    p.add_argument("--out", required=True)
    a = p.parse_args()
    meta = json.load(open(a.meta))
    # (scenario, figure) -> backend -> run -> [values]
    data = defaultdict(lambda: defaultdict(lambda: defaultdict(list)))
    order = []
    for line in open(a.results):
        if not line.strip():
            continue
        d = json.loads(line)
        key = (d["scenario"], d["figure"])
        if key not in order:
            order.append(key)
        data[key][d["backend"]][d["run"]].append(d["value"])

    def cells(values):
        if not values:
            return ["–", ""]
        return [num(statistics.median(values)), f"{num(min(values))} – {num(max(values))}"]

    def per_run(key, backend):
        # A figure measured twice in one run (the scrape times: once before
        # each worker run) counts each measurement.
        return [v for vs in data[key][backend].values() for v in vs]

    rows = []
    for scenario, title in SCENARIOS:
        keys = [k for k in order if k[0] == scenario]
        if not keys:
            continue
        rows.append(f"| **{title}** | | | | |")
        for key in keys:
            row = [key[1]]
            for backend, _ in BACKENDS:
                row += cells(per_run(key, backend))
            rows.append("| " + " | ".join(row) + " |")
        for s, top, bottom, label in RATIOS:
            if s != scenario or (s, top) not in data or (s, bottom) not in data:
                continue
            row = [f"*{label}*"]
            for backend, _ in BACKENDS:
                t, b = data[(s, top)][backend], data[(s, bottom)][backend]
                if not t or not b:
                    row += ["–", ""]
                    continue
                mt = statistics.median(per_run((s, top), backend))
                mb = statistics.median(per_run((s, bottom), backend))
                pairs = [statistics.median(t[r]) / statistics.median(b[r]) for r in t if r in b]
                row += [f"{mt / mb:.2f}×", f"{min(pairs):.2f} – {max(pairs):.2f}"]
            rows.append("| " + " | ".join(row) + " |")

    m = meta["machine"]
    out = [
        "# warden serve: the HTTP API's figures",
        "",
        f"Made by `{meta['command']}` on {meta['date']} ({meta['mode']}); "
        f"{meta['elapsed']}. What each figure means: bench/README.md, *The HTTP API*.",
        "",
        f"Machine: {m['nproc']} CPUs ({m['cpu']}), {m['ram']} RAM, Linux {m['kernel']}; "
        f"load average (1, 5, 15 min) {m['load_start']} at the start, {m['load_end']} at the end.",
        "",
        "Versions: " + ", ".join(f"{k} {v}" for k, v in meta["versions"].items()) + ".",
        "",
        "Settings: " + "; ".join(f"{k}: {v}" for k, v in meta["settings"].items()) + ".",
        "",
        "| figure | SQLite: median | min – max | PostgreSQL: median | min – max |",
        "|---|---:|---:|---:|---:|",
        *rows,
    ]
    if meta.get("failures"):
        out += ["", "Failed (their figures are missing above):", ""]
        out += [f"- {f}" for f in meta["failures"]]
    text = "\n".join(out) + "\n"
    print(text, end="")
    with open(a.out, "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
