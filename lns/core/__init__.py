"""The framework's core: problem, sub-solvers, LNS loop, incumbent, result, stop rules, metrics.

Nothing here imports :mod:`heuristics`, :mod:`learning`, :mod:`instances` or the apps
(:mod:`lns.api`, :mod:`lns.cli`, :mod:`lns.bench`, :mod:`lns.report`); the layering test
(``tests/test_layers.py``) fails on such an import.
"""
