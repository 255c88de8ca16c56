"""The framework's core: the problem (:mod:`.problem`), the solvers of its sub-problems
(:mod:`.solvers`), the LNS search (:mod:`.search`), the parallel portfolio (:mod:`.parallel`) and
whole-problem baselines (:mod:`.baselines`); typed errors and the handling of stop signals here.

Nothing here imports :mod:`heuristics`, :mod:`learning`, :mod:`instances` or the apps
(:mod:`lns.api`, :mod:`lns.cli`, :mod:`lns.bench`, :mod:`lns.report`); the layering test
(``tests/test_layers.py``) fails on such an import.
"""
