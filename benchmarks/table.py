"""Markdown table of benchmark results: `make bench COSTLAB_BENCH_JSON=/tmp/bench.jsonl`, then
`python benchmarks/table.py /tmp/bench.jsonl` (not a benchmark itself: make bench runs bench_*.py)."""
from __future__ import annotations

import json
import sys


def fmt(value: float) -> str:
    if value is None:
        return ""
    if abs(value) >= 1000:
        return f"{value:,.0f}"
    return f"{value:,.2f}"


def table(lines: list[dict]) -> str:
    out = ["| figure | value | target | ratio | verdict | command |", "|---|---:|---:|---:|---|---|"]
    for r in lines:
        target = "" if r["target"] is None else f"{'≥' if r['at_least'] else '≤'} {fmt(r['target'])}"
        verdict = "" if r["ok"] is None else ("ok" if r["ok"] else "**missed**")
        ratio = "" if r["ratio"] is None else f"{r['ratio']:.2f}"
        note = f" ({r['note']})" if r.get("note") else ""
        out.append(f"| {r['name']}{note} | {fmt(r['value'])} {r['unit']} | {target} | {ratio} | {verdict} | "
                   f"`{r['command']}` |")
    return "\n".join(out)


if __name__ == "__main__":
    with open(sys.argv[1]) as src:
        print(table([json.loads(text) for text in src if text.strip()]))
