"""Applying fixes: choosing non-overlapping edits, applying them, removing the imports they emptied."""
