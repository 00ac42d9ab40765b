"""moetune: run a fused MoE layer with moe-tune's tuned kernels from torch.

Two ways in:

* `moetune.fused_moe(...)`: AITER's `fused_moe` argument order; the layer is prepared on its
  first call (rows resolved, kernels compiled or read from the code cache) and cached by its
  weight tensors. Tables come from $MOETUNE_TUNED_TABLES (paths separated by os.pathsep) or
  `moetune.load_tables(...)`. Call it once per layer before capturing a CUDA graph: the first
  call compiles, later calls only enqueue kernels.
* `Context` / `Layer`: explicit control (max_tokens, workspace, reports), as an engine holds
  them.

Tensors: AITER's natural layouts (docs/kernel-contract.md): MXFP4 weights as uint8 (or
torch.float4_e2m1fn_x2) codes w1 [E, 2I, H/2], w2 [E, H, I/2] with e8m0 scales (uint8 or
torch.float8_e8m0fnu, not shuffled) w1_scale [E, 2I, H/32], w2_scale [E, H, I/32]; bf16
weights w1 [E, 2I, H], w2 [E, H, I]; gate/up rows interleaved; output bf16 [M, H].
"""
from __future__ import annotations

import ctypes
import enum
import json
import os
import threading

from ._capi import (
    DTYPE_A8W4,
    DTYPE_A16W4,
    DTYPE_BF16,
    ForwardArgs,
    LayerDesc,
    LayerWeights,
    MoetuneError,
    check,
    lib,
)

__all__ = [
    "ActivationType",
    "Context",
    "ForwardPlan",
    "Layer",
    "MoetuneError",
    "QuantType",
    "fused_moe",
    "get_context",
    "load_tables",
    "quantize_mxfp8",
]

DEFAULT_MAX_TOKENS = int(os.environ.get("MOETUNE_MAX_TOKENS", "8192"))


class ActivationType(enum.IntEnum):
    """AITER's ActivationType names; moe-tune's kernels implement Silu."""

    Silu = 0
    Gelu = 1
    Swiglu = 2
    No = -1


class QuantType(enum.IntEnum):
    """AITER's QuantType names; moe-tune runs No (bf16) and per_1x32 (MXFP4 / MXFP8)."""

    No = 0
    per_Tensor = 1
    per_Token = 2
    per_1x32 = 3
    per_1x128 = 4
    per_128x128 = 5


def _name(value) -> str:
    # AITER's own enums (or ours, or a plain string) compare by member name.
    return getattr(value, "name", str(value)).split(".")[-1]


def _torch():
    import torch  # imported late: the bindings themselves need no torch

    return torch


def _mxfp4_code_dtypes(torch):
    return tuple(t for t in (torch.uint8, getattr(torch, "float4_e2m1fn_x2", None)) if t is not None)


def _scale_dtypes(torch):
    return tuple(t for t in (torch.uint8, getattr(torch, "float8_e8m0fnu", None)) if t is not None)


def _fp8_dtypes(torch):
    return tuple(
        t for t in (getattr(torch, "float8_e4m3fn", None), getattr(torch, "float8_e4m3fnuz", None))
        if t is not None
    )


def _ptr(t):
    return None if t is None else ctypes.c_void_p(t.data_ptr())


def _require_on(device, name, t, dtypes=None):
    if t is None:
        raise MoetuneError(1, f"{name} is None")
    if t.device != device:
        raise MoetuneError(5, f"{name} is on {t.device}, the layer on {device}")
    if not t.is_contiguous():
        raise MoetuneError(2, f"{name} must be contiguous")
    if dtypes is not None and t.dtype not in dtypes:
        raise MoetuneError(3, f"{name} has dtype {t.dtype}, expected one of {dtypes}")


class Context:
    """One GPU: its loaded tuned tables and compiled kernels (moetune_context)."""

    def __init__(self, device=None, cache_dir: str | None = None):
        torch = _torch()
        self.device = torch.device("cuda", torch.cuda.current_device() if device is None
                                   else torch.device(device).index or 0)
        torch.cuda.init()
        handle = ctypes.c_void_p()
        with torch.cuda.device(self.device):
            check(lib().moetune_context_create(
                self.device.index, cache_dir.encode() if cache_dir else None, ctypes.byref(handle)))
        self._handle = handle
        self._layers = []  # destroyed before the context

    def close(self):
        if self._handle:
            for layer in self._layers:
                layer.close()
            lib().moetune_context_destroy(self._handle)
            self._handle = None

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass

    @property
    def arch(self) -> str:
        arch = ctypes.c_char_p()
        cus = ctypes.c_int()
        check(lib().moetune_context_device(self._handle, ctypes.byref(arch), ctypes.byref(cus)))
        return arch.value.decode()

    @property
    def compute_units(self) -> int:
        cus = ctypes.c_int()
        check(lib().moetune_context_device(self._handle, None, ctypes.byref(cus)))
        return cus.value

    def load_table(self, path) -> None:
        check(lib().moetune_context_load_table(self._handle, os.fspath(path).encode()))

    def prepare(self, w1, w2, *, topk: int, w1_scale=None, w2_scale=None, activation_dtype=None,
                doweight_stage1: bool = False, max_tokens: int = DEFAULT_MAX_TOKENS,
                tag: str = "") -> "Layer":
        """Prepares one layer. `activation_dtype`: torch.bfloat16 (A16W4 / bf16, the default)
        or an fp8 e4m3 dtype (A8W4). May compile: never inside a graph capture."""
        torch = _torch()
        activation_dtype = activation_dtype or torch.bfloat16
        mxfp4 = w1.dtype in _mxfp4_code_dtypes(torch)
        if mxfp4:
            dtype = DTYPE_A8W4 if activation_dtype in _fp8_dtypes(torch) else DTYPE_A16W4
            if dtype == DTYPE_A16W4 and activation_dtype != torch.bfloat16:
                raise MoetuneError(3, f"activations {activation_dtype} with MXFP4 weights: "
                                      "bf16 (A16W4) or fp8 e4m3 (A8W4) are supported")
            _require_on(self.device, "w1_scale", w1_scale, _scale_dtypes(torch))
            _require_on(self.device, "w2_scale", w2_scale, _scale_dtypes(torch))
            inter = w2.shape[2] * 2
            hidden = w1.shape[2] * 2
        elif w1.dtype == torch.bfloat16 and activation_dtype == torch.bfloat16:
            dtype = DTYPE_BF16
            inter = w2.shape[2]
            hidden = w1.shape[2]
        else:
            raise MoetuneError(3, f"weights {w1.dtype} with activations {activation_dtype}: "
                                  "MXFP4 (uint8 codes) or bf16 weights are supported")
        _require_on(self.device, "w1", w1)
        _require_on(self.device, "w2", w2, (w1.dtype,))
        experts = w1.shape[0]
        if tuple(w1.shape[:2]) != (experts, 2 * inter) or tuple(w2.shape[:2]) != (experts, hidden):
            raise MoetuneError(4, f"w1 {tuple(w1.shape)} and w2 {tuple(w2.shape)} are not "
                                  "[E, 2I, H(/2)] and [E, H, I(/2)]")
        desc = LayerDesc(hidden, inter, experts, topk, dtype, int(bool(doweight_stage1)),
                         max_tokens, tag.encode())
        weights = LayerWeights(_ptr(w1), _ptr(w1_scale), _ptr(w2), _ptr(w2_scale))
        handle = ctypes.c_void_p()
        with torch.cuda.device(self.device):
            check(lib().moetune_layer_prepare(self._handle, ctypes.byref(desc), ctypes.byref(weights),
                                              ctypes.byref(handle)))
        layer = Layer(self, handle, (w1, w2, w1_scale, w2_scale), hidden, topk, dtype, max_tokens)
        self._layers.append(layer)
        return layer


class Layer:
    """A prepared MoE layer (moetune_layer). Keeps its weight tensors alive."""

    def __init__(self, context, handle, tensors, hidden, topk, dtype, max_tokens):
        self.context = context
        self._handle = handle
        self._tensors = tensors
        self.hidden = hidden
        self.topk = topk
        self.dtype = dtype
        self.max_tokens = max_tokens
        # Per-call host work kept out of forward(): the workspace size of each M seen (one
        # ctypes call the first time only) and the bound C function.
        self._workspace_sizes = {}
        self._forward = lib().moetune_forward

    def close(self):
        if self._handle:
            lib().moetune_layer_destroy(self._handle)
            self._handle = None

    @property
    def report(self) -> dict:
        """What prepare did (moetune_layer_report): rows used, defaults and why, units."""
        return json.loads(lib().moetune_layer_report(self._handle).decode())

    def workspace_size(self, tokens: int) -> int:
        cached = self._workspace_sizes.get(tokens)
        if cached is not None:
            return cached
        size = ctypes.c_size_t()
        check(lib().moetune_workspace_size(self._handle, tokens, ctypes.byref(size)))
        if len(self._workspace_sizes) < 4096:  # bounded: M values of one engine repeat
            self._workspace_sizes[tokens] = size.value
        return size.value

    def selection(self, tokens: int) -> dict:
        bucket = ctypes.c_int64()
        n1, n2 = ctypes.c_char_p(), ctypes.c_char_p()
        from_row = ctypes.c_int()
        check(lib().moetune_layer_selection(self._handle, tokens, ctypes.byref(bucket),
                                            ctypes.byref(n1), ctypes.byref(n2),
                                            ctypes.byref(from_row)))
        return {"bucket_tokens": bucket.value, "kernel_name1": n1.value.decode(),
                "kernel_name2": n2.value.decode(), "from_row": bool(from_row.value)}

    def _call(self, hidden_states, topk_weight, topk_ids, a1_scale, out, workspace):
        """The checked arguments of one call: (ForwardArgs, out, the tensors it points to)."""
        torch = _torch()
        device = self.context.device
        M = hidden_states.shape[0]
        if topk_ids.dtype != torch.int32:
            topk_ids = topk_ids.to(torch.int32)
        if topk_weight.dtype != torch.float32:
            topk_weight = topk_weight.to(torch.float32)
        topk_ids = topk_ids.contiguous()
        topk_weight = topk_weight.contiguous()
        if self.dtype == DTYPE_A8W4:
            _require_on(device, "hidden_states", hidden_states, _fp8_dtypes(torch))
            _require_on(device, "a1_scale", a1_scale, _scale_dtypes(torch))
        else:
            _require_on(device, "hidden_states", hidden_states, (torch.bfloat16,))
        if tuple(hidden_states.shape) != (M, self.hidden):
            raise MoetuneError(4, f"hidden_states {tuple(hidden_states.shape)}, expected [M, {self.hidden}]")
        for name, t in (("topk_ids", topk_ids), ("topk_weight", topk_weight)):
            _require_on(device, name, t)
            if tuple(t.shape) != (M, self.topk):
                raise MoetuneError(4, f"{name} {tuple(t.shape)}, expected [{M}, {self.topk}]")
        if out is None:
            out = torch.empty((M, self.hidden), dtype=torch.bfloat16, device=device)
        else:
            _require_on(device, "out", out, (torch.bfloat16,))
        if workspace is None:
            workspace = torch.empty(max(self.workspace_size(M), 1), dtype=torch.uint8, device=device)
        stream = torch.cuda.current_stream(device).cuda_stream
        # Plain ints for the c_void_p fields: no ctypes object per pointer.
        args = ForwardArgs(hidden_states.data_ptr(),
                           a1_scale.data_ptr() if self.dtype == DTYPE_A8W4 else None,
                           topk_ids.data_ptr(), topk_weight.data_ptr(), out.data_ptr(), M,
                           workspace.data_ptr(), workspace.numel() * workspace.element_size(),
                           stream)
        return args, out, (hidden_states, a1_scale, topk_ids, topk_weight, out, workspace)

    def forward(self, hidden_states, topk_weight, topk_ids, a1_scale=None, out=None,
                workspace=None):
        """y = MoE(hidden_states) on the current torch stream. Allocations (output, workspace
        when not given) go through torch's allocator, so the call can be graph-captured."""
        args, out, _ = self._call(hidden_states, topk_weight, topk_ids, a1_scale, out, workspace)
        status = self._forward(self._handle, ctypes.byref(args))
        if status != 0:
            check(status)
        return out

    def plan(self, hidden_states, topk_weight, topk_ids, a1_scale=None, out=None,
             workspace=None) -> "ForwardPlan":
        """A planned forward for these very tensors (moetune_forward_plan_create): each
        launch() runs the layer on them, with whatever values they hold then, in one graph
        launch. For an engine that reuses its buffers and does not capture its step itself;
        not inside a graph capture (it allocates). topk_ids and topk_weight must already be
        int32 and float32 and contiguous (a converted copy would not see later writes)."""
        torch = _torch()
        if topk_ids.dtype != torch.int32 or topk_weight.dtype != torch.float32 or \
                not topk_ids.is_contiguous() or not topk_weight.is_contiguous():
            raise MoetuneError(2, "plan: topk_ids must be contiguous int32 and topk_weight "
                                  "contiguous float32 (the plan reads these very tensors)")
        args, out, tensors = self._call(hidden_states, topk_weight, topk_ids, a1_scale, out,
                                        workspace)
        handle = ctypes.c_void_p()
        check(lib().moetune_forward_plan_create(self._handle, ctypes.byref(args),
                                                ctypes.byref(handle)))
        return ForwardPlan(self, handle, out, tensors)


class ForwardPlan:
    """A planned forward (moetune_forward_plan): keeps its layer and tensors alive."""

    def __init__(self, layer, handle, out, tensors):
        self.layer = layer
        self.out = out
        self._handle = handle
        self._tensors = tensors
        self._launch = lib().moetune_forward_plan_launch

    def launch(self):
        """Runs the layer on the plan's tensors on the current torch stream; returns out."""
        torch = _torch()
        status = self._launch(self._handle,
                              torch.cuda.current_stream(self.layer.context.device).cuda_stream)
        if status != 0:
            check(status)
        return self.out

    def close(self):
        if self._handle:
            lib().moetune_forward_plan_destroy(self._handle)
            self._handle = None

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass


_contexts: dict = {}
_layers: dict = {}
_lock = threading.Lock()


def get_context(device=None) -> Context:
    """The process-wide context of a device, with $MOETUNE_TUNED_TABLES loaded on creation."""
    torch = _torch()
    index = torch.cuda.current_device() if device is None else (torch.device(device).index or 0)
    with _lock:
        if index not in _contexts:
            context = Context(index)
            for path in filter(None, os.environ.get("MOETUNE_TUNED_TABLES", "").split(os.pathsep)):
                context.load_table(path)
            _contexts[index] = context
        return _contexts[index]


def load_tables(*paths, device=None) -> None:
    """Loads tuned tables into the device's process-wide context (before preparing layers)."""
    context = get_context(device)
    for path in paths:
        context.load_table(path)


def quantize_mxfp8(x, fp8_dtype=None):
    """bf16 [M, H] -> (e4m3 codes [M, H], e8m0 scales uint8 [M, H/32]) by the rule of
    docs/kernel-contract.md: per 32 values the smallest power-of-two scale that puts the
    block's largest magnitude within e4m3's range. Pure torch (allocates)."""
    torch = _torch()
    fp8_dtype = fp8_dtype or torch.float8_e4m3fn
    emax = 240.0 if fp8_dtype == getattr(torch, "float8_e4m3fnuz", None) else 448.0
    M, H = x.shape
    blocks = x.float().reshape(M, H // 32, 32)
    amax = blocks.abs().amax(dim=-1, keepdim=True)
    e = torch.ceil(torch.log2(amax / emax)).clamp(-127, 127)
    e = torch.where(amax > 0, e, torch.zeros_like(e))
    codes = (blocks / torch.exp2(e)).clamp(-emax, emax).to(fp8_dtype).reshape(M, H)
    scales = (e + 127).to(torch.uint8).reshape(M, H // 32)
    return codes, scales


def fused_moe(hidden_states, w1, w2, topk_weight, topk_ids, expert_mask=None,
              activation=ActivationType.Silu, quant_type=QuantType.No, doweight_stage1=False,
              w1_scale=None, w2_scale=None, a1_scale=None, a2_scale=None, block_size_M=None,
              num_local_tokens=None, moe_sorting_dispatch_policy=0, dtype=None, hidden_pad=0,
              intermediate_pad=0, bias1=None, bias2=None, splitk=0):
    """AITER's `aiter.fused_moe` argument order, run with moe-tune's kernels and tuned rows.

    MXFP4 weights need quant_type per_1x32 and w1_scale / w2_scale. A8W4: hidden_states in
    e4m3 with a1_scale the e8m0 [M, H/32] scales, or bf16 hidden_states that are quantised
    here (quantize_mxfp8). Options moe-tune's kernels do not have (expert_mask, biases,
    padding, another activation or output dtype) raise NotImplementedError; the tuning knobs
    (block_size_M, splitk, dispatch policy) are decided by the tuned rows and ignored.
    """
    torch = _torch()
    unsupported = {
        "expert_mask": expert_mask is not None, "num_local_tokens": num_local_tokens is not None,
        "bias1": bias1 is not None, "bias2": bias2 is not None, "hidden_pad": hidden_pad != 0,
        "intermediate_pad": intermediate_pad != 0, "a2_scale": a2_scale is not None,
        "activation": _name(activation) != "Silu",
        "dtype": dtype not in (None, torch.bfloat16),
    }
    if any(unsupported.values()):
        names = ", ".join(k for k, v in unsupported.items() if v)
        raise NotImplementedError(f"moetune.fused_moe does not support: {names}")
    mxfp4 = w1.dtype in _mxfp4_code_dtypes(torch)
    if mxfp4 and _name(quant_type) != "per_1x32":
        raise MoetuneError(3, f"MXFP4 weights need quant_type per_1x32, not {_name(quant_type)}")
    if not mxfp4 and _name(quant_type) != "No":
        raise MoetuneError(3, f"bf16 weights need quant_type No, not {_name(quant_type)}")
    a8w4 = mxfp4 and (hidden_states.dtype in _fp8_dtypes(torch) or a1_scale is not None)
    if a8w4 and hidden_states.dtype == torch.bfloat16:
        hidden_states, a1_scale = quantize_mxfp8(hidden_states)
    activation_dtype = hidden_states.dtype
    M = hidden_states.shape[0]
    context = get_context(hidden_states.device)
    key = (context.device.index, w1.data_ptr(), w2.data_ptr(),
           None if w1_scale is None else w1_scale.data_ptr(),
           None if w2_scale is None else w2_scale.data_ptr(), tuple(w1.shape), tuple(w2.shape),
           activation_dtype, topk_ids.shape[1], bool(doweight_stage1))
    with _lock:
        layer = _layers.get(key)
        if layer is None or layer.max_tokens < M:
            # First call for these weights, or more tokens than prepared: prepare (compiles).
            layer = context.prepare(w1, w2, topk=topk_ids.shape[1], w1_scale=w1_scale,
                                    w2_scale=w2_scale, activation_dtype=activation_dtype,
                                    doweight_stage1=doweight_stage1,
                                    max_tokens=max(M, DEFAULT_MAX_TOKENS))
            _layers[key] = layer
    with torch.cuda.device(context.device):
        return layer.forward(hidden_states, topk_weight, topk_ids, a1_scale=a1_scale)
