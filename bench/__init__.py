"""Benchmarks: ``python -m bench`` runs every ``bench/bench_*.py`` module's ``run()``."""
