"""moetune's Python package on a GPU, against a float reference written in torch.

Skips (visibly) without libmoetune.so, without torch or without a CUDA/HIP GPU. Runs under
pytest or plainly:  MOETUNE_LIBRARY=BUILD/lib PYTHONPATH=python python3 python/tests/test_fused_moe.py -v
"""
import math
import os
import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
# fused_moe prepares layers up to this many tokens: every bucket up to it is compiled once.
os.environ.setdefault("MOETUNE_MAX_TOKENS", "512")

import moetune  # noqa: E402  (importing never needs the library or torch)
from moetune import _capi  # noqa: E402

try:
    import torch
except ImportError:  # the bindings test still runs
    torch = None

REPO = Path(__file__).resolve().parents[2]


def library_reason():
    try:
        _capi.lib()
        return None
    except OSError as e:
        return str(e)


def gpu_reason():
    if library_reason():
        return library_reason()
    if torch is None:
        return "torch is not installed"
    if not torch.cuda.is_available():
        return "no CUDA/HIP GPU visible to torch"
    return None


E2M1 = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0]


def dequant_mxfp4(codes, scales):
    """uint8 codes [..., K/2] (element 2i low nibble) and e8m0 scales [..., K/32] -> float32."""
    table = torch.tensor(E2M1, device=codes.device)
    low = table[(codes & 0xF).long()]
    high = table[(codes >> 4).long()]
    values = torch.stack((low, high), dim=-1).flatten(-2)
    scale = torch.exp2(scales.float() - 127).repeat_interleave(32, dim=-1)
    return values * scale


def dequant_mxfp8(codes, scales):
    return codes.float() * torch.exp2(scales.float() - 127).repeat_interleave(32, dim=-1)


def random_mxfp4(experts, rows, k, generator):
    """Codes uniform over e2m1; one scale per tensor so that each row's dot product is O(1)."""
    codes = torch.randint(0, 256, (experts, rows, k // 2), dtype=torch.uint8, device="cuda",
                          generator=generator)
    byte = round(127 + math.log2(1.0 / (2.93 * math.sqrt(k))))
    scales = torch.full((experts, rows, k // 32), byte, dtype=torch.uint8, device="cuda")
    return codes, scales


def reference(x, w1_of, w2_of, ids, weights, dtype_path):
    """y[t] = sum_k w_k * (round(silu(x W_gate) * (x W_up)) W2^T), gate/up rows interleaved,
    h rounded like the kernels (bf16, or MXFP8 on A8W4). w1_of(e) / w2_of(e): float32."""
    M, topk = ids.shape
    y = torch.zeros((M, w2_of(0).shape[0]), dtype=torch.float32, device=x.device)
    for e in ids.unique().tolist():
        token, slot = (ids == e).nonzero(as_tuple=True)
        w1 = w1_of(e)
        gu = x[token] @ w1.T
        h = torch.nn.functional.silu(gu[:, 0::2]) * gu[:, 1::2]
        if dtype_path == "a8w4":
            codes, scales = moetune.quantize_mxfp8(h)
            h = dequant_mxfp8(codes, scales)
        else:
            h = h.to(torch.bfloat16).float()
        y.index_add_(0, token, (h @ w2_of(e).T) * weights[token, slot, None])
    return y


def assert_close(test, y, ref, what):
    y = y.float()
    test.assertTrue(torch.isfinite(y).all().item(), f"{what}: NaN/Inf in the output")
    rel_l2 = ((y - ref).norm() / ref.norm()).item()
    scale = ref.pow(2).mean().sqrt().item()
    bad = ((y - ref).abs() > 0.02 * scale + 0.02 * ref.abs()).float().mean().item()
    test.assertLess(rel_l2, 0.02, f"{what}: relative L2 error {rel_l2:.4f}")
    test.assertLess(bad, 0.002, f"{what}: {bad:.4%} of elements outside tolerance")


class Layer:
    """Random weights and routing for one shape and data path, on the GPU."""

    def __init__(self, hidden, inter, experts, topk, dtype_path, seed=1):
        self.g = torch.Generator(device="cuda").manual_seed(seed)
        self.hidden, self.inter, self.experts, self.topk = hidden, inter, experts, topk
        self.dtype_path = dtype_path
        if dtype_path == "bf16":
            self.w1 = (torch.randn((experts, 2 * inter, hidden), device="cuda", generator=self.g)
                       / math.sqrt(hidden)).to(torch.bfloat16)
            self.w2 = (torch.randn((experts, hidden, inter), device="cuda", generator=self.g)
                       / math.sqrt(inter)).to(torch.bfloat16)
            self.w1_scale = self.w2_scale = None
        else:
            self.w1, self.w1_scale = random_mxfp4(experts, 2 * inter, hidden, self.g)
            self.w2, self.w2_scale = random_mxfp4(experts, hidden, inter, self.g)

    def w1_of(self, e):
        if self.w1_scale is None:
            return self.w1[e].float()
        return dequant_mxfp4(self.w1[e], self.w1_scale[e])

    def w2_of(self, e):
        if self.w2_scale is None:
            return self.w2[e].float()
        return dequant_mxfp4(self.w2[e], self.w2_scale[e])

    def inputs(self, M):
        x = torch.randn((M, self.hidden), device="cuda", generator=self.g).to(torch.bfloat16)
        ids = torch.stack([torch.randperm(self.experts, device="cuda", generator=self.g)[: self.topk]
                           for _ in range(M)]).to(torch.int32)
        weights = torch.softmax(torch.randn((M, self.topk), device="cuda", generator=self.g), -1)
        return x, ids, weights

    def quant_type(self):
        return moetune.QuantType.No if self.dtype_path == "bf16" else moetune.QuantType.per_1x32

    def reference(self, x, ids, weights, a1_scale=None):
        xf = dequant_mxfp8(x, a1_scale) if a1_scale is not None else x.float()
        return reference(xf, self.w1_of, self.w2_of, ids, weights, self.dtype_path)


class BindingsTest(unittest.TestCase):
    @unittest.skipIf(library_reason(), f"libmoetune.so: {library_reason()}")
    def test_errors_are_status_and_message(self):
        import ctypes

        lib = _capi.lib()
        self.assertEqual(lib.moetune_abi_version(), _capi.ABI_VERSION)
        with self.assertRaises(moetune.MoetuneError) as raised:
            _capi.check(lib.moetune_forward(None, None))
        self.assertEqual(raised.exception.status, 1)
        self.assertIn("layer is NULL", str(raised.exception))
        handle = ctypes.c_void_p()
        status = lib.moetune_context_create(0, None, ctypes.byref(handle))
        if status == 0:
            lib.moetune_context_destroy(handle)
        else:
            self.assertEqual(status, 5)  # no GPU: MOETUNE_ERROR_DEVICE


@unittest.skipIf(gpu_reason(), f"GPU test: {gpu_reason()}")
class FusedMoeTest(unittest.TestCase):
    def test_every_dtype_against_the_reference(self):
        for dtype_path in ("a16w4", "a8w4", "bf16"):
            layer = Layer(1024, 256, 32, 4, dtype_path)
            for M in (1, 3, 16, 37, 300):
                with self.subTest(dtype=dtype_path, M=M):
                    x, ids, weights = layer.inputs(M)
                    a1_scale = None
                    if dtype_path == "a8w4":
                        x, a1_scale = moetune.quantize_mxfp8(x)
                    y = moetune.fused_moe(x, layer.w1, layer.w2, weights, ids,
                                          quant_type=layer.quant_type(), w1_scale=layer.w1_scale,
                                          w2_scale=layer.w2_scale, a1_scale=a1_scale)
                    torch.cuda.synchronize()
                    assert_close(self, y, layer.reference(x, ids, weights, a1_scale),
                                 f"{dtype_path} M={M}")

    def test_graph_capture_and_replay(self):
        layer = Layer(1024, 256, 32, 4, "a16w4", seed=2)
        prepared = moetune.get_context().prepare(layer.w1, layer.w2, topk=4,
                                                 w1_scale=layer.w1_scale,
                                                 w2_scale=layer.w2_scale, max_tokens=64)
        M = 24
        x, ids, weights = layer.inputs(M)
        out = torch.empty((M, 1024), dtype=torch.bfloat16, device="cuda")
        workspace = torch.empty(prepared.workspace_size(M), dtype=torch.uint8, device="cuda")
        stream = torch.cuda.Stream()
        stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(stream):
            prepared.forward(x, weights, ids, out=out, workspace=workspace)  # warm-up
        torch.cuda.current_stream().wait_stream(stream)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            prepared.forward(x, weights, ids, out=out, workspace=workspace)
        for replay in range(3):
            x2, ids2, weights2 = layer.inputs(M)
            x.copy_(x2), ids.copy_(ids2), weights.copy_(weights2)
            out.fill_(float("nan"))
            graph.replay()
            torch.cuda.synchronize()
            assert_close(self, out, layer.reference(x, ids, weights), f"replay {replay}")

    def test_planned_forward_reads_its_tensors(self):
        # Layer.plan: one graph launch per call, with the values the tensors hold then.
        layer = Layer(1024, 256, 32, 4, "a16w4", seed=3)
        prepared = moetune.get_context().prepare(layer.w1, layer.w2, topk=4,
                                                 w1_scale=layer.w1_scale,
                                                 w2_scale=layer.w2_scale, max_tokens=64)
        M = 40
        x, ids, weights = layer.inputs(M)
        plan = prepared.plan(x, weights, ids)
        for launch in range(3):
            x2, ids2, weights2 = layer.inputs(M)
            x.copy_(x2), ids.copy_(ids2), weights.copy_(weights2)
            plan.out.fill_(float("nan"))
            y = plan.launch()
            torch.cuda.synchronize()
            assert_close(self, y, layer.reference(x, ids, weights), f"launch {launch}")
        plan.close()
        with self.assertRaises(moetune.MoetuneError):
            prepared.plan(x, weights, ids.to(torch.int64))  # a converted copy would go stale

    def test_tuned_table_on_its_device(self):
        # Session 9's published rows: withdrawn from the current table in session 10 (every
        # one slower than the wgmma default), kept in its results folder as a real tuned table.
        table = REPO / "results/sm_90/2026-12-02-h200-s9/published_dsv41_flash_tp4_a16w4_tuned_fmoe.csv"
        context = moetune.Context(torch.cuda.current_device())
        if (context.arch, context.compute_units) != ("sm_90", 132):
            self.skipTest(f"the tuned table is for sm_90 with 132 SMs, this is "
                          f"{context.arch} with {context.compute_units}")
        context.load_table(table)
        layer = Layer(5120, 640, 384, 6, "a16w4", seed=3)
        prepared = context.prepare(layer.w1, layer.w2, topk=6, w1_scale=layer.w1_scale,
                                   w2_scale=layer.w2_scale, max_tokens=128)
        report = prepared.report
        used = [b["tokens"] for b in report["buckets"] if b["source"] == "tuned_row"]
        self.assertEqual(used, [8, 16, 32, 64, 128])
        self.assertGreater(report["repacked_weight_bytes"], 0)  # the rows' kernels are `_rp`
        for M in (2, 8, 100):
            with self.subTest(M=M):
                x, ids, weights = layer.inputs(M)
                y = prepared.forward(x, weights, ids)
                torch.cuda.synchronize()
                assert_close(self, y, layer.reference(x, ids, weights), f"backbone M={M}")
        context.close()

    def test_unsupported_options_are_refused(self):
        layer = Layer(1024, 256, 32, 4, "bf16", seed=4)
        x, ids, weights = layer.inputs(4)
        with self.assertRaises(NotImplementedError):
            moetune.fused_moe(x, layer.w1, layer.w2, weights, ids, expert_mask=ids)
        with self.assertRaises(moetune.MoetuneError):
            moetune.fused_moe(x, layer.w1, layer.w2, weights, ids,
                              quant_type=moetune.QuantType.per_1x32)


if __name__ == "__main__":
    unittest.main()
