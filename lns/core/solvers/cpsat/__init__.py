"""CP-SAT on pure-integer problems: the model (:mod:`.model`), the sub-solver (:mod:`.subsolver`),
and the racer of the ``"race"`` start, in a child process (:mod:`.racer`)."""
