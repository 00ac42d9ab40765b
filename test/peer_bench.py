#!/usr/bin/env python3
"""Times the MXFP4 peer -- OpenAI's `triton_kernels` (matmul_ogs; vLLM's default A16W4 MoE path
on Hopper) -- on whatever NVIDIA card this runs on, by the method of ../shared/docs/FACTS.md, so
that moe-tune's own timings can be set beside the peer's on the *same* card (the figures in
test/peer_figures.csv hold for the H200 they were measured on, and for it alone).

Status (session 31, 2026-12-06): written and checked on the CPU only (its MXFP4 decode, its
torch routing and its fp32 reference against plain loops; the API lookup against a stand-in
package with v3.6's names). It has NOT run against triton_kernels: the GPU machines' image has
triton 3.6 but not the triton_kernels package (it is not part of the triton wheel, and nothing
can be fetched there), so its source tree (python/triton_kernels of triton v3.6.0) has to be
carried to the machine and put on PYTHONPATH first. Its first run is expected to need fixes.
test/performance_table.sh takes its CSV (PEER_CARD_CSV) for the summary's peer column.

What one "launch" is (the whole MoE, A16W4: bf16 activations x MXFP4 weights, e2m1 values with
one e8m0 scale per 32 along K):
  1. routing metadata from this launch's router logits (top-k + softmax over the k, expert
     histogram, gather/scatter indices, ragged-tensor metadata) -- inside the timed region;
  2. stage one: gate/up GEMM, rows gathered by the routing (gather_indx), fused swiglu
     activation (gate and up interleaved along N, as the package's swiglu expects);
  3. stage two: down GEMM, scattered back to the tokens (scatter_indx), routing weights applied
     (gammas), the top-k sum done by the package.
Weights sit in the Hopper-swizzled value/scale layouts the way vLLM prepares them for Hopper
(`make_default_matmul_mxfp4_w_layout` / `..._w_scale_layout`, mx_axis = 1); on other cards the
package's default layout for that card is used and the script says so.

The method (FACTS.md), followed exactly:
  * uniform routing: random logits, a different logits tensor for every launch of the graph, so
    every launch routes afresh;
  * weights rotated through C copies, C = ceil(4 * L2 / bytes of one layer) + 1 (at least 2),
    so a copy is re-read only after at least 4x L2 of other weights;
  * 16 launches (each with the next logits and the next weight copy) captured in one CUDA graph;
    warm-up replays, then 10 replays timed one by one with CUDA events; the figure is the
    median replay time / 16, in microseconds per launch;
  * num_warps 4 and 8, both reported, plus the better of the two.  On Hopper the package takes
    num_warps from the HopperMXScaleLayout the scales were swizzled for (its "handshake"), so
    each num_warps gets its own swizzled weights; elsewhere the script tries the opt-flags
    constraint {"num_warps": n} and reports the default alone if the package refuses it;
  * correctness at M = 8 for every (shape, num_warps): the package's output against an fp32
    torch reference of the same MoE (MXFP4 decoded here from the very codes that were
    swizzled), ||out - ref|| / ||ref|| must stay <= 0.02, else exit 2.

Numerics of the activation: the package's fused swiglu computes
silu_alpha(gate) * (up + 1), with an optional clamp (`limit`).  Default here (--act swiglu):
alpha = 1, no clamp, no bias, i.e. silu(gate) * (up + 1) -- the same work as SiLU-and-mul,
with the reference computing the same.  --act silu adds an fp32 bias of -1 on the up half so
the result is exactly silu(gate) * up (costs one small bias read per tile).

API: written against triton_kernels as shipped in the triton v3.6.0 tree (matmul_ogs with
RoutingData/GatherIndx/ScatterIndx in triton_kernels.matmul_ogs, routing built from
triton_kernels.topk + SparseMatrix + make_ragged_tensor_metadata); it also takes the v3.5 API
(triton_kernels.routing.routing).  The package's top-k and bitmatrix-metadata kernels of v3.5 and
v3.6 compile only for a power-of-two k (tl.arange over k and over 32*k); for k = 3 and 6 the
routing metadata is then built with torch ops (torch.topk, softmax over the k, a stable
argsort, a histogram) plus the package's make_ragged_tensor_metadata, and the script says so
(v3.6 only: v3.5 has no make_ragged_tensor_metadata, so there a non-power-of-two k stops the
script with exit 4).  vLLM itself routes such k with its own top-k and bit-packing kernels and a
power-of-two-padded copy of the package's metadata kernel, so the routing share of the time
here is an approximation of a few kernel launches either way; the GEMMs are the package's.
The later API (triton_kernels.matmul, v3.7+) is detected and refused with a message.

Exit codes: 0 fine; 2 correctness check failed; 3 triton_kernels cannot be imported; 4 the
triton_kernels API found is not one this script drives; 5 no CUDA device (or no torch).

Run (from the repository root, on the GPU machine):
  python3 test/peer_bench.py --csv peer_$(date +%F).csv
  python3 test/peer_bench.py --shapes backbone --m 1 8 --csv /tmp/peer.csv
  python3 test/peer_bench.py --check-only          # API report + the M = 8 checks, no timing
"""

import argparse
import csv
import importlib
import math
import os
import signal
import statistics
import sys
import time

# shape name -> (hidden H, intermediate I, experts E, top-k); the same names as
# test/peer_figures.csv and FACTS.md's tables.
SHAPES = {
    "backbone": (5120, 640, 384, 6),
    "draft": (5120, 640, 128, 3),
    "ep": (5120, 2304, 96, 6),
}
DEFAULT_M = [1, 8, 64, 512, 4096]
CHECK_M = 8  # FACTS.md's correctness point
REL_ERR_LIMIT = 0.02

EXIT_WRONG, EXIT_NO_TK, EXIT_API, EXIT_NO_GPU = 2, 3, 4, 5

# e2m1 magnitudes for codes 0..7; bit 3 is the sign.  Same table as the OCP MX spec.
E2M1_VALUES = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0]
# rms of a uniformly random e2m1 code (the sign does not matter): sqrt(mean(v^2))
E2M1_RMS = math.sqrt(sum(v * v for v in E2M1_VALUES) / len(E2M1_VALUES))


class ApiError(Exception):
    """The triton_kernels found is not one this script knows how to drive."""


def log(*args):
    # Human-readable lines go to stderr when the CSV goes to stdout, so stdout stays a clean CSV.
    print(*args, file=LOG_STREAM, flush=True)


LOG_STREAM = sys.stdout


def first_line(exc):
    text = f"{type(exc).__name__}: {exc}".strip()
    return text.splitlines()[0][:300] if text else type(exc).__name__


# --------------------------------------------------------------------------------------------
# API discovery: which names this triton_kernels has
# --------------------------------------------------------------------------------------------


class Api:
    """Entry points of the installed triton_kernels, found by name (newest name first)."""

    def __init__(self):
        self.notes = []  # what was found, printed in the header

    def note(self, text):
        self.notes.append(text)


def _optional_import(name):
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


def resolve_api(tk):
    api = Api()
    api.location = os.path.dirname(os.path.abspath(tk.__file__))

    mo = _optional_import("triton_kernels.matmul_ogs")
    if mo is None or not hasattr(mo, "matmul_ogs"):
        if _optional_import("triton_kernels.matmul") is not None:
            raise ApiError(
                "this triton_kernels has `triton_kernels.matmul` but no `matmul_ogs`: it is the "
                "post-v3.6 API (the matmul_ogs -> matmul refactor of January 2026), whose "
                "gather/scatter/top-k-sum contract differs; this script drives the v3.5/v3.6 "
                "matmul_ogs API. Install the triton_kernels of the triton v3.6.0 tree.")
        raise ApiError("triton_kernels.matmul_ogs.matmul_ogs not found")
    api.mo = mo
    api.matmul_ogs = mo.matmul_ogs
    api.PrecisionConfig = mo.PrecisionConfig
    api.FusedActivation = mo.FusedActivation
    api.FnSpecs = getattr(mo, "FnSpecs", None)
    if api.FnSpecs is None:
        api.FnSpecs = importlib.import_module("triton_kernels.specialize").FnSpecs
    api.note("GEMM: triton_kernels.matmul_ogs.matmul_ogs")

    # RoutingData / GatherIndx / ScatterIndx: in matmul_ogs from v3.6 on, in routing before.
    legacy = _optional_import("triton_kernels.routing")
    for name in ("RoutingData", "GatherIndx", "ScatterIndx"):
        obj = getattr(mo, name, None)
        where = "triton_kernels.matmul_ogs"
        if obj is None and legacy is not None:
            obj, where = getattr(legacy, name, None), "triton_kernels.routing"
        if obj is None:
            raise ApiError(f"{name} found neither in triton_kernels.matmul_ogs nor in "
                           "triton_kernels.routing")
        setattr(api, name, obj)
    api.note(f"RoutingData/GatherIndx/ScatterIndx from {where}")

    api.legacy_routing = getattr(legacy, "routing", None) if legacy is not None else None
    topk_mod = _optional_import("triton_kernels.topk")
    api.topk = getattr(topk_mod, "topk", None) if topk_mod is not None else None
    tensor = importlib.import_module("triton_kernels.tensor")
    api.tensor = tensor
    api.make_ragged = getattr(tensor, "make_ragged_tensor_metadata", None)
    api.wrap_torch_tensor = tensor.wrap_torch_tensor
    api.convert_layout = getattr(tensor, "convert_layout", None)
    api.FP4 = tensor.FP4
    routing_desc = []
    if api.legacy_routing is not None:
        routing_desc.append("triton_kernels.routing.routing (v3.5 style)")
    if api.topk is not None and api.make_ragged is not None:
        routing_desc.append("triton_kernels.topk.topk + SparseMatrix metadata + "
                            "make_ragged_tensor_metadata (v3.6 style)")
    api.note("package routing entry points: " + ("; ".join(routing_desc) or "none"))

    swiglu = importlib.import_module("triton_kernels.swiglu")
    api.swiglu_fn = swiglu.swiglu_fn

    # opt-flags constraints (num_warps, where the package accepts it)
    api.opt_flags = (_optional_import("triton_kernels.matmul_ogs_details.opt_flags")
                     or _optional_import("triton_kernels.matmul_details.opt_flags"))
    api.layout = _optional_import("triton_kernels.tensor_details.layout")
    return api


def make_activation(api, act):
    """FusedActivation for the package's swiglu with alpha = 1 and no clamp.

    v3.6: FnSpecs(..., reduction_n=2) and FusedActivation(specs, args);
    v3.5: FnSpecs(...) and FusedActivation(specs, args, reduction_n)."""
    fn, names = api.swiglu_fn, ("alpha", "limit")
    args = (1.0, act["limit"])
    try:
        specs = api.FnSpecs("swiglu", fn, names, reduction_n=2)
        return api.FusedActivation(specs, args), "FnSpecs(reduction_n=2) (v3.6 style)"
    except TypeError:
        specs = api.FnSpecs("swiglu", fn, names)
        return api.FusedActivation(specs, args, 2), "FusedActivation(..., 2) (v3.5 style)"


def make_precision(api, scale):
    # `weight_scale` up to v3.6, `b_mx_scale` later
    try:
        return api.PrecisionConfig(weight_scale=scale)
    except TypeError:
        return api.PrecisionConfig(b_mx_scale=scale, b_microblock_size=32)


# --------------------------------------------------------------------------------------------
# Weight layouts
# --------------------------------------------------------------------------------------------


def _as_layout_pair(result):
    """make_default_* return (class, kwargs) up to v3.6 and a layout instance later."""
    if isinstance(result, tuple) and len(result) == 2 and isinstance(result[1], dict):
        return result
    return result, {}


def _layout_name(layout, kwargs):
    name = getattr(layout, "__name__", None) or type(layout).__name__
    return f"{name}{kwargs}" if kwargs else name


class LayoutPlan:
    """How the weights are swizzled and how num_warps is chosen, for one num_warps."""

    def __init__(self, value, value_kw, scale, scale_kw, warps_by_layout, desc):
        self.value, self.value_kw = value, value_kw
        self.scale, self.scale_kw = scale, scale_kw
        self.warps_by_layout = warps_by_layout  # True: the scale layout fixes num_warps
        self.desc = desc


def plan_layout(api, torch, warps, force_strided):
    cc = torch.cuda.get_device_capability()
    lay = api.layout
    if force_strided or lay is None or api.convert_layout is None:
        why = "asked for" if force_strided else "no layout module"
        return LayoutPlan(None, {}, None, {}, False, f"strided (package default; {why})")
    value = scale = None
    value_kw = scale_kw = {}
    if hasattr(lay, "make_default_matmul_mxfp4_w_layout"):
        # what vLLM's _swizzle_mxfp4 calls: the card decides the layout
        value, value_kw = _as_layout_pair(lay.make_default_matmul_mxfp4_w_layout(mx_axis=1))
        sc_args = {"mx_axis": 1}
        if warps is not None:
            sc_args["num_warps"] = warps
        scale, scale_kw = _as_layout_pair(lay.make_default_matmul_mxfp4_w_scale_layout(**sc_args))
    elif cc[0] == 9:
        # older trees: the Hopper classes by name (newest name first)
        vcls = getattr(lay, "HopperMXValueLayout", None) or getattr(lay, "HopperAmpereMXValueLayout", None)
        scls = getattr(lay, "HopperMXScaleLayout", None) or getattr(lay, "HopperAmpereMXScaleLayout", None)
        if vcls is not None and scls is not None:
            value, value_kw = vcls, {"mx_axis": 1}
            scale, scale_kw = scls, {"mx_axis": 1, "num_warps": warps or 8}
    if value is None or "Strided" in _layout_name(value, {}):
        return LayoutPlan(None, {}, None, {}, False,
                          f"strided (the package's default on sm_{cc[0]}{cc[1]}; "
                          "no swizzled MXFP4 layout for this card)")
    scale_name = _layout_name(scale, scale_kw)
    by_layout = "Hopper" in scale_name
    where = "Hopper-swizzled" if cc[0] == 9 else f"package default for sm_{cc[0]}{cc[1]}"
    desc = f"{where}: values {_layout_name(value, value_kw)}, scales {scale_name}"
    return LayoutPlan(value, value_kw, scale, scale_kw, by_layout, desc)


# --------------------------------------------------------------------------------------------
# Weights: random MXFP4 codes, swizzled copies, and their fp32 decode for the reference
# --------------------------------------------------------------------------------------------


def scale_exponent(k_dim):
    """e8m0 exponent that gives a K-long dot product of random e2m1 codes and N(0,1) inputs an
    output of about unit size, so nothing saturates bf16 and the error check means something."""
    return 127 - round(math.log2(math.sqrt(k_dim) * E2M1_RMS))


class RawWeights:
    """One layer's MXFP4 weights as codes, [E, N, K/2] e2m1 pairs (low nibble = even k) and
    [E, N, K/32] e8m0 scales, K innermost -- the checkpoint layout vLLM starts from."""

    def __init__(self, torch, E, H, I, act, gen, dev="cuda"):

        def codes(n, k):
            q = torch.randint(0, 256, (E, n, k // 2), dtype=torch.uint8, device=dev, generator=gen)
            b = scale_exponent(k)
            s = torch.randint(b - 1, b + 2, (E, n, k // 32), dtype=torch.uint8, device=dev,
                              generator=gen)
            return q, s

        # stage one: N = 2I, gate in even columns and up in odd ones (the package's swiglu
        # splits the GEMM output into interleaved pairs); K = H.  Stage two: N = H, K = I.
        self.w1q, self.w1s = codes(2 * I, H)
        self.w2q, self.w2s = codes(H, I)
        self.bias1 = None
        if act["bias_minus_one"]:
            self.bias1 = torch.zeros(E, 2 * I, dtype=torch.float32, device=dev)
            self.bias1[:, 1::2] = -1.0


def decode_mxfp4(torch, q, s):
    """[..., N, K/2] codes + [..., N, K/32] scales -> fp32 [..., N, K]."""
    lut = torch.tensor(E2M1_VALUES + [-v for v in E2M1_VALUES], dtype=torch.float32,
                       device=q.device)
    lo = lut[(q & 0xF).long()]
    hi = lut[(q >> 4).long()]
    vals = torch.stack((lo, hi), dim=-1).flatten(-2)
    scale = torch.exp2(s.float() - 127.0)
    return (vals.unflatten(-1, (-1, 32)) * scale.unsqueeze(-1)).flatten(-2)


class LayerCopy:
    """One swizzled copy of a layer, ready for matmul_ogs."""

    def __init__(self, api, torch, raw, plan):
        self.w1, self.pc1, b1 = self._prep(api, raw.w1q, raw.w1s, plan)
        self.w2, self.pc2, b2 = self._prep(api, raw.w2q, raw.w2s, plan)
        self.bias1 = None if raw.bias1 is None else raw.bias1.clone()
        self.nbytes = b1 + b2 + (0 if self.bias1 is None else self.bias1.numel() * 4)

    @staticmethod
    def _prep(api, q, s, plan):
        # As vLLM's _swizzle_mxfp4: transpose so that K (the MX axis) is dim 1 with stride 1,
        # wrap as FP4 (logical [E, K, N]) and convert to the layout.  clone() gives every copy
        # its own memory even where the layout conversion would return a view.
        qt = q.clone().transpose(-2, -1)
        st = s.clone().transpose(-2, -1)
        wq = api.wrap_torch_tensor(qt, dtype=api.FP4)
        ws = api.wrap_torch_tensor(st)
        if plan.value is not None:
            wq = api.convert_layout(wq, plan.value, **plan.value_kw)
            ws = api.convert_layout(ws, plan.scale, **plan.scale_kw)
        nbytes = 0
        for t in (wq, ws):
            d = t.storage.data
            nbytes += d.numel() * d.element_size()
        return wq, make_precision(api, ws), nbytes


# --------------------------------------------------------------------------------------------
# Routing
# --------------------------------------------------------------------------------------------


class Routing:
    """Builds (RoutingData, GatherIndx, ScatterIndx) from router logits, in one of three ways."""

    def __init__(self, api, torch, kind, E, k):
        self.api, self.torch, self.kind, self.E, self.k = api, torch, kind, E, k
        self._static = {}

    def describe(self):
        return {
            "legacy": "package: triton_kernels.routing.routing(logits, k, sm_first=False)",
            "package": "package: triton_kernels.topk.topk(apply_softmax=True) -> SparseMatrix "
                       "bitmatrix metadata -> make_ragged_tensor_metadata",
            "torch": "torch.topk + softmax over the k + stable argsort + histogram, then the "
                     "package's make_ragged_tensor_metadata (the package's top-k/bitmatrix "
                     "kernels need a power-of-two k)",
        }[self.kind]

    def __call__(self, logits):
        if self.kind == "legacy":
            return self.api.legacy_routing(logits, self.k, sm_first=False)
        if self.kind == "package":
            return self._package(logits)
        return self._torch(logits)

    def _finish(self, vals, col_sorted, row_sorted, hist, n):
        api = self.api
        ragged = api.make_ragged(hist, n)
        # routing weights in expert-sorted order: what stage two multiplies by (gammas)
        gate_scal = vals.reshape(-1)[col_sorted.long()]
        rdata = api.RoutingData(gate_scal, hist, self.E, self.k, ragged)
        # gather: sorted row -> (token * k + j); scatter: (token * k + j) -> sorted row
        return rdata, api.GatherIndx(col_sorted, row_sorted), api.ScatterIndx(row_sorted, col_sorted)

    def _package(self, logits):
        sm = self.api.topk(logits, self.k, apply_softmax=True)
        md = getattr(sm, "mask_metadata", None)
        if md is None:
            md = sm.mask.metadata
        n = logits.shape[0] * self.k
        return self._finish(sm.vals, md.col_sorted_indx, md.row_sorted_indx,
                            md.col_sum[:self.E], n)

    def _torch(self, logits):
        torch = self.torch
        M = logits.shape[0]
        n = M * self.k
        if M not in self._static:
            # per-M constants made outside the graph
            self._static[M] = (torch.arange(n, dtype=torch.int32, device=logits.device),
                               torch.ones(n, dtype=torch.int32, device=logits.device))
        iota, ones = self._static[M]
        top_vals, top_ids = torch.topk(logits.float(), self.k, dim=1)
        # the package's apply_softmax: softmax over the selected k, returned in logits' dtype
        vals = torch.softmax(top_vals, dim=1).to(logits.dtype)
        flat = top_ids.reshape(-1)
        col_sorted = torch.argsort(flat, stable=True).to(torch.int32)
        row_sorted = torch.empty_like(col_sorted).scatter_(0, col_sorted.long(), iota)
        hist = torch.zeros(self.E, dtype=torch.int32, device=logits.device)
        hist.scatter_add_(0, flat, ones)
        return self._finish(vals, col_sorted, row_sorted, hist, n)


def routing_pairs(torch, rdata, gather, E, k, M):
    """(token, expert, weight) of every routed pair, read back from the routing the package got,
    so that the reference sees exactly the kernel's routing."""
    n = M * k
    hist = rdata.expt_hist[:E].long()
    ends = torch.cumsum(hist, 0)
    pos = torch.arange(n, device=hist.device)
    expert = torch.searchsorted(ends, pos, right=True)
    flat = gather.src_indx[:n].long()
    token = flat // k
    weight = rdata.gate_scal[:n].float()
    # sanity of our reading of the routing: every token k times, weights summing to 1
    problems = []
    if int(hist.sum()) != n:
        problems.append(f"histogram sums to {int(hist.sum())}, expected {n}")
    counts = torch.bincount(token, minlength=M)
    if counts.numel() != M or not bool((counts == k).all()):
        problems.append("tokens do not each appear k times in the gather index")
    wsum = torch.zeros(M, device=weight.device).index_add_(0, token.clamp(0, M - 1), weight)
    if not bool(((wsum - 1.0).abs() < 2e-2).all()):
        problems.append("routing weights of a token do not sum to 1")
    return token, expert, weight, problems


def reference_moe(torch, x, raw, token, expert, weight, act):
    """fp32 MoE on the decoded MXFP4 weights, only for the experts the routing touched."""
    M, H = x.shape
    out = torch.zeros(M, H, dtype=torch.float32, device=x.device)
    xf = x.float()
    for e in torch.unique(expert).tolist():
        sel = (expert == e).nonzero().squeeze(1)
        tok = token[sel]
        w1 = decode_mxfp4(torch, raw.w1q[e], raw.w1s[e])  # [2I, H]
        w2 = decode_mxfp4(torch, raw.w2q[e], raw.w2s[e])  # [H, I]
        h = xf[tok] @ w1.T
        if raw.bias1 is not None:
            h = h + raw.bias1[e]
        # the package's swiglu with alpha = 1 and no clamp: silu(gate) * (up + 1); with
        # --act silu the -1 bias is already in `up`, which makes it silu(gate) * up_true
        gate, up = h[:, 0::2], h[:, 1::2]
        a = torch.nn.functional.silu(gate) * (up + 1.0)
        out.index_add_(0, tok, (a @ w2.T) * weight[sel, None])
    return out


# --------------------------------------------------------------------------------------------
# One MoE launch and the graph timing
# --------------------------------------------------------------------------------------------


class Moe:
    """Routing + stage one + stage two for a fixed M, with outputs allocated once."""

    def __init__(self, api, torch, routing, fused_act, E, H, I, k, M):
        self.api, self.routing, self.act = api, routing, fused_act
        self.k, self.M = k, M
        # 3-D outputs, as vLLM passes them (matmul_ogs checks y against (1, rows, N))
        self.y1 = torch.empty(1, M * k, I, dtype=torch.bfloat16, device="cuda")
        self.y2 = torch.empty(1, M, H, dtype=torch.bfloat16, device="cuda")

    def __call__(self, x, logits, layer):
        rdata, gather, scatter = self.routing(logits)
        mm = self.api.matmul_ogs
        mm(x, layer.w1, layer.bias1, rdata, gather_indx=gather, precision_config=layer.pc1,
           fused_activation=self.act, y=self.y1)
        mm(self.y1.view(self.M * self.k, -1), layer.w2, None, rdata, scatter_indx=scatter,
           precision_config=layer.pc2, gammas=rdata.gate_scal, y=self.y2)
        return rdata, gather


def time_graph(torch, launch, launches, warmup, replays):
    """Median-ready list of per-launch microseconds: `launches` launches in one CUDA graph,
    `warmup` untimed replays, then `replays` replays each between two CUDA events."""
    # eager pass first: compiles every Triton specialization the graph will use and primes the
    # caching allocator, so nothing compiles or syncs during capture
    for i in range(launches):
        launch(i)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for i in range(launches):
            launch(i)
    for _ in range(warmup):
        graph.replay()
    torch.cuda.synchronize()
    per_launch = []
    for _ in range(replays):
        start = torch.cuda.Event(enable_timing=True)
        stop = torch.cuda.Event(enable_timing=True)
        start.record()
        graph.replay()
        stop.record()
        stop.synchronize()
        per_launch.append(start.elapsed_time(stop) * 1000.0 / launches)
    del graph
    return per_launch


class FlagSpy:
    """Records the opt flags matmul_ogs picks (block sizes, num_warps, ...) so the report says
    what actually ran; a no-op where the package's internals differ."""

    def __init__(self, api):
        self.seen = []
        self.ok = hasattr(api.mo, "make_opt_flags")
        if self.ok:
            original = api.mo.make_opt_flags

            def spy(*args, **kwargs):
                flags = original(*args, **kwargs)
                self.seen.append(flags)
                return flags

            api.mo.make_opt_flags = spy

    def clear(self):
        self.seen = []

    def warps(self):
        return sorted({getattr(f, "num_warps", None) for f in self.seen} - {None})

    def summary(self):
        if not self.ok or len(self.seen) < 2:
            return ""
        parts = []
        for name, f in zip(("s1", "s2"), self.seen[:2]):
            g = lambda a: getattr(f, a, "?")
            parts.append(f"{name}: bm{g('block_m')} bn{g('block_n')} bk{g('block_k')} "
                         f"w{g('num_warps')} st{g('num_stages')} sk{g('split_k')}"
                         f"{' persistent' if g('is_persistent') is True else ''}")
        return "; ".join(parts)


# --------------------------------------------------------------------------------------------
# Driver
# --------------------------------------------------------------------------------------------


def parse_args(argv):
    p = argparse.ArgumentParser(
        description="Time OpenAI triton_kernels' MXFP4 MoE (the peer) by FACTS.md's method.")
    p.add_argument("--shapes", nargs="+", default=list(SHAPES), choices=list(SHAPES),
                   help="shape names (default: all)")
    p.add_argument("--m", nargs="+", type=int, default=DEFAULT_M, help="token counts M")
    p.add_argument("--csv", default=None, help="CSV file (default: CSV on stdout, the "
                   "human-readable lines on stderr)")
    p.add_argument("--replays", type=int, default=10, help="timed graph replays")
    p.add_argument("--launches", type=int, default=16, help="launches per graph")
    p.add_argument("--warmup", type=int, default=3, help="untimed replays before timing")
    p.add_argument("--warps", nargs="+", type=int, default=[4, 8], help="num_warps to try")
    p.add_argument("--act", choices=["swiglu", "silu"], default="swiglu",
                   help="swiglu: silu(gate)*(up+1), no bias (default); silu: exact "
                   "silu(gate)*up via a -1 bias on the up half")
    p.add_argument("--routing", choices=["auto", "legacy", "package", "torch"], default="auto",
                   help="how routing metadata is built (auto: the package where it compiles)")
    p.add_argument("--strided", action="store_true",
                   help="keep the weights in the plain strided layout (no swizzle)")
    p.add_argument("--check-only", action="store_true",
                   help="API report and the M = 8 correctness checks, no timing")
    p.add_argument("--keep-going", action="store_true",
                   help="after a failed correctness check, go on (exit 2 at the end)")
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args(argv)
    if a.launches < 1 or a.replays < 1 or a.warmup < 0 or any(m < 1 for m in a.m):
        p.error("--launches, --replays and every M must be >= 1; --warmup >= 0")
    if any(w < 1 or w & (w - 1) for w in a.warps):
        p.error("--warps must be powers of two")
    return a


def choose_routing(api, torch, args, E, k, probe_logits):
    if args.routing != "auto":
        order = [args.routing]
    else:
        order = ["legacy", "package", "torch"]
    errors = []
    for kind in order:
        if kind == "legacy" and api.legacy_routing is None:
            errors.append("legacy: no triton_kernels.routing.routing")
            continue
        if kind in ("package", "torch") and api.make_ragged is None:
            errors.append(f"{kind}: no triton_kernels.tensor.make_ragged_tensor_metadata")
            continue
        if kind == "package" and api.topk is None:
            errors.append("package: no triton_kernels.topk.topk")
            continue
        r = Routing(api, torch, kind, E, k)
        try:
            r(probe_logits)
            torch.cuda.synchronize()
            return r, errors
        except Exception as exc:  # a compile error for a non-power-of-two k, typically
            errors.append(f"{kind}: {first_line(exc)}")
    raise ApiError("no routing path works here: " + " | ".join(errors))


def main(argv=None):
    global LOG_STREAM
    args = parse_args(argv)
    LOG_STREAM = sys.stderr if args.csv is None else sys.stdout

    try:
        import torch
    except ImportError as exc:
        log(f"error: torch cannot be imported ({exc})")
        return EXIT_NO_GPU
    try:
        import triton
        import triton_kernels
    except Exception as exc:  # ImportError, or an error raised while the package loads
        log("error: `triton_kernels` cannot be imported -- the peer cannot be timed.")
        log(f"       import error: {type(exc).__name__}: {exc}")
        log("       It is not part of the triton wheel: install it from the triton source tree "
            "of the installed triton's tag, e.g. `pip install "
            "'git+https://github.com/triton-lang/triton.git@v3.6.0#subdirectory=python/triton_kernels'`, "
            "or put python/triton_kernels of that tree on PYTHONPATH.")
        return EXIT_NO_TK
    if not torch.cuda.is_available():
        log("error: no CUDA device visible to torch")
        return EXIT_NO_GPU
    try:
        api = resolve_api(triton_kernels)
    except Exception as exc:  # ApiError, or a module/name this tree does not have
        log(f"error: unsupported triton_kernels API: {first_line(exc)}")
        return EXIT_API

    torch.backends.cuda.matmul.allow_tf32 = False  # the reference stays fp32
    dev = torch.cuda.current_device()
    props = torch.cuda.get_device_properties(dev)
    card = torch.cuda.get_device_name(dev)
    cc = torch.cuda.get_device_capability(dev)
    l2 = getattr(props, "L2_cache_size", 0) or 0
    if l2 <= 0:
        l2 = 50 * 2**20
        log("warning: L2 size not reported by torch; assuming 50 MiB")
    act = {"limit": None, "bias_minus_one": args.act == "silu"}
    fused_act, act_api = make_activation(api, act)
    spy = FlagSpy(api)

    log(f"card: {card} (sm_{cc[0]}{cc[1]}, {props.multi_processor_count} SMs, "
        f"L2 {l2 / 2**20:.0f} MiB); torch {torch.__version__}; triton {triton.__version__}")
    log(f"triton_kernels: {api.location}")
    for n in api.notes:
        log(f"  API: {n}")
    log(f"  API: fused activation: triton_kernels.swiglu.swiglu_fn via {act_api}")
    log("  API: num_warps: on Hopper matmul_ogs takes it from the HopperMXScaleLayout the "
        "scales were swizzled for (make_default_matmul_mxfp4_w_scale_layout(num_warps=...)); "
        "elsewhere opt_flags.update_opt_flags_constraints({'num_warps': n}) is tried")
    log("method: whole MoE incl. routing metadata; fresh logits per launch; weights rotated so "
        f"reuse distance >= 4x L2; median of {args.replays} graph replays of {args.launches} "
        f"launches (after {args.warmup} warm-up replays), per launch")

    ctx = Context(args, api, torch, triton, card, l2, act, fused_act, spy)

    # A run cut short (the GPU machines' calls run under `timeout`, which sends SIGTERM) still
    # leaves the points it finished: the CSV is rewritten after every shape and on SIGTERM.
    def on_term(signum, frame):
        log("terminated: writing the points timed so far")
        emit_csv(ctx)
        sys.exit(124)

    signal.signal(signal.SIGTERM, on_term)
    for shape in args.shapes:
        code = run_shape(ctx, shape)
        if code or args.csv:  # (on stdout the CSV goes out once, at the end)
            emit_csv(ctx)
        if code:
            return code
    if not args.csv:
        emit_csv(ctx)
    if ctx.failed:
        log("CORRECTNESS FAILURES: " + "; ".join(ctx.failed))
        return EXIT_WRONG
    return 0


class Context:
    """What every (shape, num_warps) run shares; `rows` collects the CSV."""

    def __init__(self, args, api, torch, triton, card, l2, act, fused_act, spy):
        self.args, self.api, self.torch, self.triton = args, api, torch, triton
        self.card, self.l2, self.act, self.fused_act, self.spy = card, l2, act, fused_act, spy
        self.rows, self.failed = [], []
        self.gen = torch.Generator(device="cuda")
        self.gen.manual_seed(args.seed)
        self.warps_settable = True  # False once the package refuses a num_warps constraint


class NotSettable(Exception):
    """The package refused the {"num_warps": n} constraint."""


def run_shape(ctx, shape):
    torch, args, api = ctx.torch, ctx.args, ctx.api
    H, I, E, k = SHAPES[shape]
    log(f"\n== {shape}: H={H} I={I} E={E} top-k={k}")
    raw = RawWeights(torch, E, H, I, ctx.act, ctx.gen)
    probe_logits = torch.randn(CHECK_M, E, dtype=torch.bfloat16, device="cuda", generator=ctx.gen)
    try:
        routing, rejected = choose_routing(api, torch, args, E, k, probe_logits)
    except ApiError as exc:
        log(f"error: {shape}: {exc}")
        return EXIT_API
    for r in rejected:
        log(f"  routing: not used -- {r}")
    log(f"  routing: {routing.describe()}")

    # num_warps: on Hopper the scale layout fixes it (one swizzle per num_warps); elsewhere the
    # opt-flags constraint is tried, and the package's own choice ("default") is timed as well
    first_plan = plan_layout(api, torch, args.warps[0], args.strided)
    warps_list = list(args.warps) if first_plan.warps_by_layout else list(args.warps) + [None]
    per_warps, descs = {}, {}
    for warps in warps_list:
        if warps is not None and not first_plan.warps_by_layout and not ctx.warps_settable:
            continue
        label = str(warps) if warps is not None else "default"
        try:
            result = run_config(ctx, shape, raw, routing, probe_logits, warps, label)
        except NotSettable as exc:
            ctx.warps_settable = False
            log(f"  num_warps {label}: not settable in this package ({exc}); the package's "
                "default is reported instead")
            continue
        if result is None:
            continue
        if isinstance(result, int):
            return result
        per_warps[label], descs[label] = result
    if per_warps and not args.check_only:
        for M in args.m:
            cands = [(us[M], lab) for lab, us in per_warps.items() if M in us]
            if not cands:
                continue
            best_us, best_lab = min(cands)
            log(f"  {shape:8s} M={M:5d} best   : {best_us:9.1f} us/launch (num_warps {best_lab})")
            ctx.rows.append({"shape": shape, "M": M, "num_warps": "best", "us": f"{best_us:.1f}",
                             "layout": descs[best_lab], "routing": routing.kind,
                             "note": f"best of num_warps {'/'.join(per_warps)}: {best_lab}"})
    del raw
    torch.cuda.empty_cache()
    return 0


def run_config(ctx, shape, raw, routing, probe_logits, warps, label):
    """Check at M = 8, then time every M, for one num_warps.  Returns ({M: us}, layout text),
    an exit code, or None when nothing was timed."""
    torch, args, api, spy, act = ctx.torch, ctx.args, ctx.api, ctx.spy, ctx.act
    H, I, E, k = SHAPES[shape]
    plan = plan_layout(api, torch, warps, args.strided)
    constrained = warps is not None and not plan.warps_by_layout
    if constrained:
        if api.opt_flags is None or not hasattr(api.opt_flags, "update_opt_flags_constraints"):
            raise NotSettable("no opt-flags constraints module")
        api.opt_flags.update_opt_flags_constraints({"num_warps": warps})
    copies = []
    try:
        copies.append(LayerCopy(api, torch, raw, plan))
        layer_bytes = copies[0].nbytes
        n_copies = max(2, math.ceil(4 * ctx.l2 / layer_bytes) + 1)
        while len(copies) < n_copies:
            copies.append(LayerCopy(api, torch, raw, plan))
        torch.cuda.synchronize()
        log(f"  num_warps {label}: {plan.desc}; one layer {layer_bytes / 2**20:.1f} MiB, "
            f"{n_copies} copies (reuse distance {(n_copies - 1) * layer_bytes / ctx.l2:.1f}x L2)")

        # ---- correctness at M = 8 (also where an unaccepted `limit=None` is found out) ----
        moe = Moe(api, torch, routing, ctx.fused_act, E, H, I, k, CHECK_M)
        x8 = torch.randn(CHECK_M, H, dtype=torch.bfloat16, device="cuda", generator=ctx.gen)
        spy.clear()
        try:
            rdata, gather = moe(x8, probe_logits, copies[0])
            torch.cuda.synchronize()
        except AssertionError as exc:
            if constrained and "num_warps" in str(exc):
                raise NotSettable(first_line(exc)) from None
            raise
        except Exception as exc:
            if act["limit"] is not None:
                raise
            log(f"  swiglu limit=None refused ({first_line(exc)}); no clamp by limit=inf instead")
            act["limit"] = float("inf")
            ctx.fused_act, _ = make_activation(api, act)
            moe.act = ctx.fused_act
            spy.clear()
            rdata, gather = moe(x8, probe_logits, copies[0])
            torch.cuda.synchronize()
        out = moe.y2[0].float()
        token, expert, weight, problems = routing_pairs(torch, rdata, gather, E, k, CHECK_M)
        for pr in problems:
            log(f"  WARNING routing read-back: {pr}")
        ref = reference_moe(torch, x8, raw, token, expert, weight, act)
        rel = (torch.linalg.vector_norm(out - ref) / torch.linalg.vector_norm(ref)).item()
        if not math.isfinite(rel):
            rel = float("inf")
        used = spy.warps()
        if warps is not None and used and used != [warps]:
            log(f"  WARNING: asked num_warps {warps}, the kernels ran with {used}")
        if act["bias_minus_one"]:
            act_desc = f"silu(gate)*up (swiglu alpha=1, limit={act['limit']}, bias -1 on up)"
        else:
            act_desc = f"silu(gate)*(up+1) (swiglu alpha=1, limit={act['limit']}, no bias)"
        ok = rel <= REL_ERR_LIMIT
        log(f"  check M={CHECK_M} num_warps {label}: rel err {rel:.5f} (limit {REL_ERR_LIMIT}) "
            f"{'ok' if ok else 'FAILED'}; activation {act_desc}; ran {spy.summary() or '?'}")
        base = {"shape": shape, "num_warps": label, "layout": plan.desc, "routing": routing.kind}
        rel_text = f"{rel:.5f}"
        if not ok:
            ctx.failed.append(f"{shape} num_warps {label}: rel err {rel_text}")
            log("!" * 78)
            log(f"!! CORRECTNESS FAILURE: {shape} num_warps {label}: ||out-ref||/||ref|| = "
                f"{rel_text} > {REL_ERR_LIMIT}")
            log("!" * 78)
            if not args.keep_going:
                ctx.rows.append(dict(base, M=CHECK_M, rel_err=rel_text, note="check failed"))
                return EXIT_WRONG
        del moe, x8, out, ref
        if args.check_only or CHECK_M not in args.m:
            ctx.rows.append(dict(base, M=CHECK_M, rel_err=rel_text, note="correctness check"))
        if args.check_only:
            return None

        # ---- timing ----
        timed = {}
        for M in args.m:
            moe = Moe(api, torch, routing, ctx.fused_act, E, H, I, k, M)
            x = torch.randn(M, H, dtype=torch.bfloat16, device="cuda", generator=ctx.gen)
            # one logits tensor per launch: every launch in the graph routes afresh
            logits = [torch.randn(M, E, dtype=torch.bfloat16, device="cuda", generator=ctx.gen)
                      for _ in range(args.launches)]

            def launch(i, moe=moe, x=x, logits=logits):
                moe(x, logits[i], copies[i % len(copies)])

            spy.clear()
            t0 = time.time()
            us = time_graph(torch, launch, args.launches, args.warmup, args.replays)
            med = statistics.median(us)
            cfg = spy.summary()
            timed[M] = med
            log(f"  {shape:8s} M={M:5d} num_warps {label:>7s}: {med:9.1f} us/launch "
                f"(min {min(us):.1f}, max {max(us):.1f}; {time.time() - t0:.0f} s) {cfg}")
            ctx.rows.append(dict(base, M=M, us=f"{med:.1f}",
                                 rel_err=rel_text if M == CHECK_M else "", note=cfg))
            del moe, x, logits, launch
        return timed, plan.desc
    finally:
        if constrained:
            api.opt_flags.reset_opt_flags_constraints()
        copies.clear()
        torch.cuda.synchronize()
        torch.cuda.empty_cache()


CSV_FIELDS = ["shape", "M", "num_warps", "us", "rel_err", "card", "triton_version",
              "triton_kernels_location", "layout", "routing", "note"]


def emit_csv(ctx):
    args = ctx.args
    out = open(args.csv, "w", newline="") if args.csv else sys.stdout
    try:
        w = csv.DictWriter(out, fieldnames=CSV_FIELDS, extrasaction="ignore")
        w.writeheader()
        for r in ctx.rows:
            full = {"us": "", "rel_err": "", "card": ctx.card,
                    "triton_version": ctx.triton.__version__,
                    "triton_kernels_location": ctx.api.location,
                    "layout": "", "routing": "", "note": ""}
            full.update(r)
            w.writerow(full)
    finally:
        if args.csv:
            out.close()
            log(f"CSV written to {args.csv}")
        else:
            out.flush()


if __name__ == "__main__":
    sys.exit(main())
