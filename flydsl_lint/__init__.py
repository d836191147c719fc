"""flydsl-lint: linter, autofixer and parity verifier for FlyDSL kernel code."""

__version__ = "0.1.0"
