"""Coverage and power simulations of the statistics evalkit prints, one module per family.

Each module defines ``table(sims: int, seed: int) -> list[dict]``: one row per (statistic, setting), with the keys
``statistic``, ``setting``, ``nominal``, ``coverage`` (or ``power``), ``sims``. ``bench/bench_coverage.py`` prints
every module's table at full size; the tests run a small seeded grid of each.
"""
