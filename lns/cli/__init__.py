"""Command-line entry points (Hydra apps). The library never imports this package.

This package's ``__init__`` is the first of the project's code that runs for ``lns-solve``
(and ``python -m lns.cli.solve``), before the imports of Hydra, SCIP and NumPy: from here on
a stop signal ends the program with one line instead of a traceback (:mod:`lns.cli.signals`).
"""

from lns.cli.signals import exit_on_stop_signals, running_as

if running_as("lns-solve", "lns.cli.solve"):
    exit_on_stop_signals("lns-solve")
