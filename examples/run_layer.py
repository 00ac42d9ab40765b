"""Run one MoE layer the way a serving engine does: load the tuned table once, prepare the
layer once (before any graph capture), then call forward per step on the engine's stream,
optionally inside a CUDA graph.

    MOETUNE_LIBRARY=build/cuda/lib PYTHONPATH=python python3 examples/run_layer.py \
        --table results/sm_90/dsv41_flash_tp4_a16w4_tuned_fmoe.csv --tokens 8 64 100

Random MXFP4 weights stand in for a checkpoint's (same layout: uint8 codes, e8m0 scales).
"""
import argparse
import json
import time

import torch

import moetune


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--table", action="append", default=[],
                        help="tuned fMoE table (repeatable)")
    parser.add_argument("--shape", default="5120,640,384,6", help="H,I,E,TOPK")
    parser.add_argument("--tokens", type=int, nargs="+", default=[8, 64, 100])
    parser.add_argument("--max-tokens", type=int, default=256)
    args = parser.parse_args()
    H, I, E, topk = (int(v) for v in args.shape.split(","))

    # Once per process and GPU.
    context = moetune.Context(torch.cuda.current_device())
    for table in args.table:
        context.load_table(table)
    print(f"device {context.arch} with {context.compute_units} SMs/CUs")

    # Once per layer, at load time: resolves rows, compiles (or reads the code cache),
    # repacks weights for `_rp` kernels.
    w1 = torch.randint(0, 256, (E, 2 * I, H // 2), dtype=torch.uint8, device="cuda")
    w2 = torch.randint(0, 256, (E, H, I // 2), dtype=torch.uint8, device="cuda")
    w1_scale = torch.full((E, 2 * I, H // 32), 119, dtype=torch.uint8, device="cuda")
    w2_scale = torch.full((E, H, I // 32), 121, dtype=torch.uint8, device="cuda")
    start = time.perf_counter()
    layer = context.prepare(w1, w2, topk=topk, w1_scale=w1_scale, w2_scale=w2_scale,
                            max_tokens=args.max_tokens)
    print(f"prepared in {time.perf_counter() - start:.1f} s")
    report = layer.report
    for b in report["buckets"]:
        why = f" ({b['rejection']})" if b["rejection"] else ""
        print(f"  tokens <= {b['tokens']:>5}: {b['source']:<20} {b['row'] or '-'}{why}")
    print(f"  repacked weights: {report['repacked_weight_bytes'] / 1e6:.1f} MB")

    # Per step: one call per MoE layer on the current stream.
    for M in args.tokens:
        x = torch.randn((M, H), device="cuda").to(torch.bfloat16)
        logits = torch.randn((M, E), device="cuda")
        weights, ids = torch.topk(torch.softmax(logits, -1), topk)
        weights = weights / weights.sum(-1, keepdim=True)
        y = layer.forward(x, weights, ids.to(torch.int32))
        torch.cuda.synchronize()

        # The same call captured once and replayed, as engines run decode steps.
        out = torch.empty_like(y)
        workspace = torch.empty(layer.workspace_size(M), dtype=torch.uint8, device="cuda")
        graph = torch.cuda.CUDAGraph()
        ids32 = ids.to(torch.int32)
        with torch.cuda.graph(graph):
            layer.forward(x, weights, ids32, out=out, workspace=workspace)
        graph.replay()
        torch.cuda.synchronize()
        same = torch.equal(out, y)
        start_event, stop_event = torch.cuda.Event(True), torch.cuda.Event(True)
        start_event.record()
        for _ in range(20):
            graph.replay()
        stop_event.record()
        torch.cuda.synchronize()
        print(f"M={M:>5}: {json.dumps(layer.selection(M))}; graph replay "
              f"{start_event.elapsed_time(stop_event) / 20 * 1e3:.1f} us, equals eager: {same}")
    context.close()


if __name__ == "__main__":
    main()
