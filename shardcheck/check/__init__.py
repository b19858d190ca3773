"""Checking files: the runner and its supervised workers, the cache, file discovery,
the pyproject loader, fixes, add-noqa, baselines, and the check, types and specs
commands."""
