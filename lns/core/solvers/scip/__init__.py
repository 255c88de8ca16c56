"""SCIP as the sub-solver: the sub-solver (:mod:`.subsolver`), named settings of the sub-problems
(:mod:`.settings`), and the memory given back between the solves of one model (:mod:`.memory`)."""
