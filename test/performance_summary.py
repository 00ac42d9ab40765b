#!/usr/bin/env python3
"""Summary of `moe-tune bench --roofline` JSON files against the MXFP4 peer and issue #13's
targets, as Markdown (stdout). The peer's figures (test/peer_figures.csv) are those of
../shared/docs/FACTS.md: OpenAI triton_kernels matmul_ogs (vLLM's A16W4 MoE path) on the same
H200 type, measured 2026-11-30 by the same method (whole MoE, uniform routing, cold weights,
median of 10 graph replays of 16 launches). Each bench file lists the default configuration
first for every M, so the first row per (shape, M) is the default.
The peer's figures hold for the H200 only: a bench run on another card (its JSON's "device")
shows them beside its rows but takes no ratio to them and no verdict from them, since a faster
or slower card would move our side alone; the roofline ratios stay, against the ceilings the
same run measured on its own card.
A peer measured on the bench's own card (test/peer_bench.py's CSV, --peer-card; session 31)
is compared like the H200 figures on the H200: the best num_warps per (shape, M), its ratio and
its verdict, marked "same card". Its rows for another card are ignored.

Usage: performance_summary.py [--peer-card PEER_BENCH_CSV] PEER_CSV BENCH_JSON...
"""
import csv
import json
import sys

PEER_DEVICE = "NVIDIA H200"  # the card of test/peer_figures.csv


def measured_peer(path):
    """test/peer_bench.py's CSV -> {(card, shape name, M): best µs over its num_warps rows}."""
    best = {}
    with open(path) as f:
        for r in csv.DictReader(f):
            if not r.get("us"):
                continue  # a point the peer could not run (its log says why)
            key = (r["card"], r["shape"], int(r["M"]))
            best[key] = min(best.get(key, float("inf")), float(r["us"]))
    return best


def main():
    args = sys.argv[1:]
    card_peer = {}
    if args and args[0] == "--peer-card":
        card_peer = measured_peer(args[1])
        args = args[2:]
    peers, names = {}, {}
    with open(args[0]) as f:
        for r in csv.DictReader(f):
            dims = (int(r["hidden"]), int(r["inter"]), int(r["experts"]), int(r["topk"]))
            peers[dims + (int(r["M"]),)] = float(r["peer_us"])
            names[dims] = r["shape"]
    benches = []
    for path in args[1:]:
        with open(path) as f:
            benches.append(json.load(f))
    # Issue #13: A8W4 within 1.1x of A16W4 at every M (the best A16W4 row of these runs).
    a16w4_best = {}
    for bench in benches:
        for row in bench["rows"]:
            if row["dtype"] == "a16w4":
                key = (row["hidden"], row["inter"], row["experts"], row["topk"], row["M"])
                a16w4_best[key] = min(a16w4_best.get(key, float("inf")), row["total_us"])
    print("| shape | dtype | M | default µs | best µs | best configuration | roofline µs | best / roofline (target) "
          "| peer µs | peer / best (target ≥ 1.25×) | met |")
    print("|---|---|---:|---:|---:|---|---:|---|---:|---|---|")
    for bench in benches:
        groups = {}
        for row in bench["rows"]:
            key = (row["hidden"], row["inter"], row["experts"], row["topk"], row["M"])
            groups.setdefault((row["dtype"], key), []).append(row)
        for (dtype, key), rows in groups.items():
            default = rows[0]
            best = min(rows, key=lambda r: r["total_us"])
            name = names.get(key[:4], f"E{key[2]} top{key[3]} H{key[0]} I{key[1]}")
            peer = peers.get(key)
            m = key[4]
            ratio = best["total_us"] / best["roofline_us"]
            verdicts = []
            # Roofline targets: M = 8..512 at most 1.3x, M >= 4096 at most 1.6x; M = 1 only the
            # backbone's 20 us.
            if m == 1:
                if key[2] == 384 and dtype == "a16w4":
                    verdicts.append(best["total_us"] <= 20.0)
                    roof_cell = f"{ratio:.2f}× (≤ 20 µs)"
                else:
                    roof_cell = f"{ratio:.2f}× (–)"
            else:
                roof_target = 1.6 if m >= 4096 else 1.3
                verdicts.append(ratio <= roof_target)
                roof_cell = f"{ratio:.2f}× (≤ {roof_target}×)"
            peer_cell, speed_cell = "–", "–"
            # The peer this run is compared with: one timed on its own card, else FACTS.md's
            # where the run's card is the H200 too.
            device = bench.get("device", "")
            same_card = card_peer.get((device, name, m))
            compared, label = ((same_card, " (same card)") if same_card is not None
                               else (peer, "") if device.startswith(PEER_DEVICE) else (None, ""))
            if compared is not None and dtype == "a16w4":
                speed = compared / best["total_us"]
                peer_cell, speed_cell = f"{compared:.1f}{label}", f"{speed:.2f}×"
                verdicts.append(speed >= 1.25)
            elif peer is not None and dtype == "a16w4":
                peer_cell, speed_cell = f"{peer:.1f} (H200)", f"– (bench on {bench.get('device', '?')})"
            elif dtype == "a8w4" and key in a16w4_best:
                vs = best["total_us"] / a16w4_best[key]
                peer_cell, speed_cell = "–", f"A8W4 = {vs:.2f}× A16W4 (≤ 1.1×)"
                verdicts.append(vs <= 1.1)
            correct = all(r["correct"] for r in rows)
            cfg = "default" if best is default else f"`{best['stage1_config']}` + `{best['stage2_config']}`"
            print(f"| {name} | {dtype} | {m} | {default['total_us']:.1f} | {best['total_us']:.1f} | {cfg} "
                  f"| {best['roofline_us']:.1f} | {roof_cell} | {peer_cell} | {speed_cell} "
                  f"| {'yes' if all(verdicts) and correct else 'no'} |")


if __name__ == "__main__":
    main()
