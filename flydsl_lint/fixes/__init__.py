"""Applying fixes: non-overlapping edits, re-checked to a fixed point, written atomically."""
