"""The problem: its one representation (:mod:`.mip`), read with every number checked
(:mod:`.validation`, :mod:`.file_numbers`), and the files of solutions (:mod:`.solution_file`)
and of known optima (:mod:`.solu_file`)."""
