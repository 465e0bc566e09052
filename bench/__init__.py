"""Arbiter's benchmarks, run from the project root as `python -m bench.<name>` (`make bench`).

Entry points: importing, annotate, load, judges, dashboards, export; common holds what they
share. Not part of the installed package (pyproject.toml lists the apps only).
"""
