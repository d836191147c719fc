"""CUDA-on-CPU torch shim for compile mode.

Kernel tests build their inputs with ``device="cuda"``, ``.cuda()``, streams and
events. On a machine without a GPU we still want those tests to reach the
FlyDSL builders so every specialization they request gets traced and compiled
(under ``COMPILE_ONLY=1`` nothing is launched). The shim therefore rewrites
every CUDA device request to the CPU and answers ``torch.cuda`` queries as if
one GPU of the target architecture were present.

It must be installed before FlyDSL is imported: FlyDSL registers
``torch.cuda.Stream`` as a launch-argument type at import time, and the fake
stream class below has to be the one it registers.
"""

from __future__ import annotations

import contextlib
import functools

# Factory functions that accept a ``device=`` keyword.
_FACTORIES = (
    "arange", "as_tensor", "empty", "empty_like", "empty_strided", "eye", "full",
    "full_like", "linspace", "logspace", "ones", "ones_like", "rand", "rand_like",
    "randint", "randint_like", "randn", "randn_like", "randperm", "tensor",
    "zeros", "zeros_like", "normal",
)
_TENSOR_FACTORY_METHODS = ("new_empty", "new_full", "new_ones", "new_tensor", "new_zeros")


def _is_cuda(device) -> bool:
    import torch

    if isinstance(device, torch.device):
        return device.type == "cuda"
    if isinstance(device, str):
        return device.split(":", 1)[0] == "cuda"
    # A bare integer is a CUDA ordinal in torch's device conventions.
    return isinstance(device, int) and not isinstance(device, bool)


def _cpu_device(device):
    return "cpu" if _is_cuda(device) else device


def _redirect_device_kwarg(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if "device" in kwargs:
            kwargs["device"] = _cpu_device(kwargs["device"])
        return fn(*args, **kwargs)

    return wrapper


class _FakeStream:
    """Stands in for torch.cuda.Stream; FlyDSL reads ``cuda_stream`` (0 = default)."""

    cuda_stream = 0

    def __init__(self, *args, **kwargs):
        pass

    def synchronize(self):
        pass

    def wait_stream(self, other):
        pass

    def wait_event(self, event):
        pass

    def record_event(self, event=None):
        return event or _FakeEvent()

    def query(self):
        return True

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


class _FakeEvent:
    def __init__(self, *args, **kwargs):
        pass

    def record(self, stream=None):
        pass

    def synchronize(self):
        pass

    def wait(self, stream=None):
        pass

    def query(self):
        return True

    def elapsed_time(self, other):
        # Nonzero so benchmark helpers that divide by it keep going.
        return 1.0


class _FakeDeviceProperties:
    def __init__(self, arch: str):
        self.name = f"CUDA-on-CPU shim ({arch})"
        self.gcnArchName = arch
        self.multi_processor_count = 304
        self.total_memory = 64 << 30
        self.major, self.minor = 9, 4
        self.warp_size = 32 if arch.startswith(("gfx10", "gfx11", "gfx12")) else 64
        self.L2_cache_size = 4 << 20
        self.max_threads_per_multi_processor = 2048
        self.regs_per_multiprocessor = 65536


def _report_cpu_tensors_as_cuda(torch) -> None:
    """Make CPU tensors (where every "cuda" request landed) say they are on the GPU.

    Wrappers such as FlyDSL's flash-attention interface refuse tensors whose
    ``is_cuda`` is false. Storage stays on the CPU: torch's C++ side never reads
    these Python attributes, and the shim's factories and ``Tensor.to`` map any
    "cuda" device they are handed (``device=x.device``) back to the CPU. Every
    CPU tensor reports ``cuda:0``, including ones a test made on "cpu" on purpose;
    other devices (meta, ...) are left alone.
    """
    real_device = torch.Tensor.device.__get__
    cuda0 = torch.device("cuda", 0)

    def device(self):
        actual = real_device(self)
        return cuda0 if actual.type == "cpu" else actual

    def is_cuda(self):
        return real_device(self).type in ("cpu", "cuda")

    torch.Tensor.device = property(device)
    torch.Tensor.is_cuda = property(is_cuda)


def _noop(name: str):
    """A do-nothing stand-in for `torch.cuda.<name>`, its own function object: torch._dynamo keys
    its trace rules by function, and one object under two names with different rules stops it
    ("Duplicate torch object", raised by the first torch.profiler or torch.compile use)."""
    def noop(*args, **kwargs):
        return None

    noop.__name__ = noop.__qualname__ = name
    return noop


def install(arch: str) -> None:
    """Route torch's CUDA device requests to the CPU, pretending one ``arch`` GPU exists."""
    import torch

    for name in _FACTORIES:
        if hasattr(torch, name):
            setattr(torch, name, _redirect_device_kwarg(getattr(torch, name)))
    for name in _TENSOR_FACTORY_METHODS:
        setattr(torch.Tensor, name, _redirect_device_kwarg(getattr(torch.Tensor, name)))

    original_generator = torch.Generator

    class CpuGenerator(original_generator):
        # A class, not a wrapper function: code annotates with `torch.Generator | None`.
        def __new__(cls, device="cpu"):
            return original_generator.__new__(cls, _cpu_device(device))

        def __init__(self, device="cpu"):
            pass

    torch.Generator = CpuGenerator

    original_to = torch.Tensor.to

    def to(self, *args, **kwargs):
        args = tuple(_cpu_device(a) if isinstance(a, (str, torch.device)) else a for a in args)
        if "device" in kwargs:
            kwargs["device"] = _cpu_device(kwargs["device"])
        return original_to(self, *args, **kwargs)

    torch.Tensor.to = to
    _report_cpu_tensors_as_cuda(torch)
    torch.Tensor.cuda = lambda self, *args, **kwargs: self
    torch.nn.Module.cuda = lambda self, *args, **kwargs: self

    properties = _FakeDeviceProperties(arch)
    cuda = torch.cuda
    replacements = {
        "is_available": lambda: True,
        "is_initialized": lambda: True,
        "is_current_stream_capturing": lambda: False,
        "device_count": lambda: 1,
        "current_device": lambda: 0,
        "set_device": _noop("set_device"),
        "init": _noop("init"),
        "_lazy_init": _noop("_lazy_init"),
        "synchronize": _noop("synchronize"),
        "empty_cache": _noop("empty_cache"),
        "manual_seed": _noop("manual_seed"),
        "manual_seed_all": _noop("manual_seed_all"),
        "reset_peak_memory_stats": _noop("reset_peak_memory_stats"),
        "memory_allocated": lambda *a, **k: 0,
        "max_memory_allocated": lambda *a, **k: 0,
        "mem_get_info": lambda *a, **k: (properties.total_memory, properties.total_memory),
        "get_device_name": lambda *a, **k: properties.name,
        "get_device_properties": lambda *a, **k: properties,
        "get_device_capability": lambda *a, **k: (properties.major, properties.minor),
        "get_arch_list": lambda: [arch],
        "Stream": _FakeStream,
        "ExternalStream": _FakeStream,
        "Event": _FakeEvent,
        "current_stream": lambda *a, **k: _FakeStream(),
        "default_stream": lambda *a, **k: _FakeStream(),
        "stream": lambda *a, **k: contextlib.nullcontext(),
        "device": lambda *a, **k: contextlib.nullcontext(),
        "_sleep": _noop("_sleep"),
    }
    for name, value in replacements.items():
        setattr(cuda, name, value)
    # Tests branch on torch.version.hip to pick ROCm dtypes (e.g. fp8 "fnuz"
    # variants on gfx942), so the shim must look like a ROCm build.
    if getattr(torch.version, "hip", None) is None:
        torch.version.hip = "6.4.0"
