"""Running checks: the checker over one file, the fix loop, a run over many files and its result cache."""
