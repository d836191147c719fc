import subprocess
import sys

import pytest

from tests.verify.conftest import REPO_ROOT

SCRIPT = """
from flydsl_lint.verify import shim
shim.install("gfx950")
import torch
x = torch.randn(4, device="cuda")
y = torch.zeros(4, device=torch.device("cuda", 0)).cuda().to("cuda:0")
z = x.to("cuda", torch.float16).new_empty(2, device="cuda")
g = torch.Generator(device="cuda")
g.manual_seed(0)
assert isinstance(g, torch.Generator) and (torch.Generator | None) is not None
assert {t.device.type for t in (x, y, z)} == {"cuda"} and z.dtype == torch.float16
assert all(t.is_cuda for t in (x, y, z, x[1:], x + 1, x.view(2, 2), torch.empty_like(x)))
assert str(x.device) == "cuda:0" and x.device == y.device
assert torch.zeros(2, device=x.device).is_cuda and x.to(x.device).is_cuda  # device=x.device still works
assert (x.cpu().numpy().shape, float((x * 0).sum())) == ((4,), 0.0)  # storage really is on the CPU
assert not torch.empty(2, device="meta").is_cuda
assert torch.cuda.is_available() and torch.cuda.device_count() == 1
assert torch.cuda.get_device_properties(0).gcnArchName == "gfx950"
stream = torch.cuda.current_stream()
start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
with torch.cuda.stream(stream):
    start.record(); end.record(); torch.cuda.synchronize()
assert stream.cuda_stream == 0 and start.elapsed_time(end) > 0
assert torch.version.hip
print("ok")
"""


def test_cuda_requests_land_on_cpu():
    pytest.importorskip("torch")
    result = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, cwd=REPO_ROOT)
    assert result.stdout.strip() == "ok", result.stderr


DYNAMO_SCRIPT = """
from flydsl_lint.verify import shim
shim.install("gfx942")
import torch
import torch._dynamo.trace_rules as rules
# FlyDSL's run_perftest profiles the torch reference first; torch._dynamo then maps every
# torch.cuda function to its trace rule, and refuses one function object under two names.
rules.lookup(torch.cuda.synchronize)
with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]):
    torch.rand(4, 4, device="cuda").sum()
print("ok")
"""


def test_shimmed_cuda_functions_keep_torch_dynamo_working():
    pytest.importorskip("torch")
    result = subprocess.run([sys.executable, "-c", DYNAMO_SCRIPT], capture_output=True, text=True, cwd=REPO_ROOT)
    assert result.stdout.strip().endswith("ok"), result.stderr[-2000:]
