"""Replays captured launches on request and reports their GPU time (device mode).

Protocol: one JSON object per stdin line, ``{"target": "module:qualname",
"inputs": "<file saved by pytest_device>"}``; one reply per line,
``{"seconds": t}`` or ``{"error": message}``. Never run on GPU hardware by
this project's CI.
"""

from __future__ import annotations

import functools
import importlib
import json
import sys


@functools.lru_cache(maxsize=None)
def _resolve(target: str):
    module_name, _, qualname = target.partition(":")
    obj = importlib.import_module(module_name)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return obj


@functools.lru_cache(maxsize=64)
def _inputs(path: str) -> dict:
    import torch

    return {n: v.cuda() if isinstance(v, torch.Tensor) else v for n, v in torch.load(path).items()}


def _time_once(target: str, inputs_path: str) -> float:
    import torch

    launcher, inputs = _resolve(target), _inputs(inputs_path)
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    launcher(**inputs)
    end.record()
    end.synchronize()
    return start.elapsed_time(end) / 1000.0


def main() -> int:
    sys.path.insert(0, "")
    for line in sys.stdin:
        request = json.loads(line)
        try:
            reply = {"seconds": _time_once(request["target"], request["inputs"])}
        except Exception as exc:  # reported to the runner, which names the launch
            reply = {"error": f"{type(exc).__name__}: {exc}"}
        print(json.dumps(reply), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
