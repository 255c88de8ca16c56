"""Generators of the problem distributions of the learned-LNS literature.

Each class (``mvc``, ``mis``, ``sc``, ``ca``, ``cfl``) has a frozen parameter dataclass, validated
on construction, ``small`` and ``large`` presets, and a pure ``generate(params, rng, name)``
returning a :class:`lns.core.problem.mip.Problem`::

    from instances.generators import problem_class, instance_rng
    mis = problem_class("mis")
    problem = mis.generate(mis.params("small", formulation="clique"), instance_rng(0, 0), "mis_0")
    problem.write("mis_0.mps.gz")
"""

from instances.generators.registry import CLASSES, ProblemClass, problem_class
from instances.generators.writing import MANIFEST, instance_rng, write_set

__all__ = ["CLASSES", "MANIFEST", "ProblemClass", "instance_rng", "problem_class", "write_set"]
