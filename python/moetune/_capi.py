"""ctypes bindings of include/moetune/moetune.h (libmoetune.so). No torch here.

The library is found, in order, at:
  1. $MOETUNE_LIBRARY: the path of libmoetune.so, or a directory holding it;
  2. next to this package (moetune/libmoetune.so, where `pip install` can place a copy);
  3. the dynamic loader's search path (LD_LIBRARY_PATH, ldconfig).
"""
from __future__ import annotations

import ctypes
import os
from pathlib import Path

ABI_VERSION = 1  # MOETUNE_ABI_VERSION of the header these bindings mirror

DTYPE_A16W4 = 0
DTYPE_A8W4 = 1
DTYPE_BF16 = 2

OK = 0
STATUS_NAMES = {
    0: "MOETUNE_OK",
    1: "MOETUNE_ERROR_NULL_POINTER",
    2: "MOETUNE_ERROR_INVALID_ARGUMENT",
    3: "MOETUNE_ERROR_DTYPE",
    4: "MOETUNE_ERROR_SHAPE",
    5: "MOETUNE_ERROR_DEVICE",
    6: "MOETUNE_ERROR_TABLE",
    7: "MOETUNE_ERROR_COMPILE",
    8: "MOETUNE_ERROR_WORKSPACE",
    9: "MOETUNE_ERROR_GPU",
    10: "MOETUNE_ERROR_INTERNAL",
}


class MoetuneError(RuntimeError):
    """A failed moetune call: `status` is the C status code, the message the library's."""

    def __init__(self, status: int, message: str):
        super().__init__(f"{STATUS_NAMES.get(status, status)}: {message}")
        self.status = status


class LayerDesc(ctypes.Structure):
    _fields_ = [
        ("hidden", ctypes.c_int64),
        ("inter", ctypes.c_int64),
        ("experts", ctypes.c_int32),
        ("topk", ctypes.c_int32),
        ("dtype", ctypes.c_int),
        ("doweight_stage1", ctypes.c_int32),
        ("max_tokens", ctypes.c_int64),
        ("tag", ctypes.c_char_p),
    ]


class LayerWeights(ctypes.Structure):
    _fields_ = [
        ("w1", ctypes.c_void_p),
        ("w1_scales", ctypes.c_void_p),
        ("w2", ctypes.c_void_p),
        ("w2_scales", ctypes.c_void_p),
    ]


class ForwardArgs(ctypes.Structure):
    _fields_ = [
        ("hidden_states", ctypes.c_void_p),
        ("hidden_scales", ctypes.c_void_p),
        ("topk_ids", ctypes.c_void_p),
        ("topk_weights", ctypes.c_void_p),
        ("output", ctypes.c_void_p),
        ("tokens", ctypes.c_int64),
        ("workspace", ctypes.c_void_p),
        ("workspace_bytes", ctypes.c_size_t),
        ("stream", ctypes.c_void_p),
    ]


def _candidates():
    env = os.environ.get("MOETUNE_LIBRARY")
    if env:
        path = Path(env)
        yield path / "libmoetune.so" if path.is_dir() else path
        return  # an explicit choice is never second-guessed
    yield Path(__file__).resolve().parent / "libmoetune.so"
    yield Path("libmoetune.so")  # the loader's own search


def _load():
    errors = []
    for candidate in _candidates():
        if candidate.parent != Path(".") and not candidate.exists():
            errors.append(f"{candidate}: no such file")
            continue
        try:
            return ctypes.CDLL(str(candidate))
        except OSError as e:
            errors.append(str(e))
    raise OSError(
        "libmoetune.so not found; build it (cmake --build BUILD --target moetune) and set "
        "MOETUNE_LIBRARY=BUILD/lib, or copy it into the moetune package. Tried: "
        + "; ".join(errors)
    )


def _declare(lib):
    p = ctypes.POINTER
    status = ctypes.c_int
    signatures = {
        "moetune_abi_version": (ctypes.c_int, []),
        "moetune_last_error": (ctypes.c_char_p, []),
        "moetune_context_create": (status, [ctypes.c_int, ctypes.c_char_p, p(ctypes.c_void_p)]),
        "moetune_context_destroy": (None, [ctypes.c_void_p]),
        "moetune_context_make_current": (status, [ctypes.c_void_p]),
        "moetune_context_device": (status, [ctypes.c_void_p, p(ctypes.c_char_p), p(ctypes.c_int)]),
        "moetune_context_load_table": (status, [ctypes.c_void_p, ctypes.c_char_p]),
        "moetune_layer_prepare": (
            status,
            [ctypes.c_void_p, p(LayerDesc), p(LayerWeights), p(ctypes.c_void_p)],
        ),
        "moetune_layer_destroy": (None, [ctypes.c_void_p]),
        "moetune_layer_report": (ctypes.c_char_p, [ctypes.c_void_p]),
        "moetune_workspace_size": (status, [ctypes.c_void_p, ctypes.c_int64, p(ctypes.c_size_t)]),
        "moetune_layer_selection": (
            status,
            [ctypes.c_void_p, ctypes.c_int64, p(ctypes.c_int64), p(ctypes.c_char_p),
             p(ctypes.c_char_p), p(ctypes.c_int)],
        ),
        "moetune_forward": (status, [ctypes.c_void_p, p(ForwardArgs)]),
        "moetune_forward_plan_create": (status, [ctypes.c_void_p, p(ForwardArgs), p(ctypes.c_void_p)]),
        "moetune_forward_plan_launch": (status, [ctypes.c_void_p, ctypes.c_void_p]),
        "moetune_forward_plan_destroy": (None, [ctypes.c_void_p]),
    }
    for name, (restype, argtypes) in signatures.items():
        fn = getattr(lib, name)
        fn.restype = restype
        fn.argtypes = argtypes
    found = lib.moetune_abi_version()
    if found != ABI_VERSION:
        raise OSError(f"libmoetune.so has ABI version {found}, this package needs {ABI_VERSION}")
    return lib


_lib = None


def lib():
    """The loaded library (loaded on first use, so importing moetune never fails)."""
    global _lib
    if _lib is None:
        _lib = _declare(_load())
    return _lib


def check(status: int) -> None:
    if status != OK:
        raise MoetuneError(status, lib().moetune_last_error().decode(errors="replace"))
