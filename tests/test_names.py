"""Names: a problem's names as one buffer, read like a tuple of strings."""

import pickle

import numpy as np
import pytest

from helpers import miplib
from lns.core.errors import InvalidProblemDataError
from lns.core.problem.mip import read_problem
from lns.core.problem.names import Names

WORDS = ("x0", "cap_1", "", "débit", "y[2,3]")


def test_names_read_like_the_strings_they_hold():
    names = Names.of(WORDS)
    assert len(names) == 5 and list(names) == list(WORDS) and names == WORDS
    assert names[3] == "débit" and names[-1] == "y[2,3]" and names[2] == ""
    assert list(names[1:4]) == ["cap_1", "", "débit"]
    assert list(names.take(np.array([4, 0, 3]))) == ["y[2,3]", "x0", "débit"]
    assert list(names.take(np.array([], dtype=int))) == []
    with pytest.raises(IndexError):
        names[5]


def test_membership_is_the_membership_of_the_strings():
    names = Names.of(WORDS)
    for word in (*WORDS, "x", "x00", "cap_2", "debit", "débit", "y[2,3", 3, None):
        assert (word in names) == (word in WORDS), word
    assert "" not in Names.of(["a"]) and "a" not in Names.of([])


def test_names_compare_pickle_and_are_not_copied_again():
    names = Names.of(WORDS)
    assert names != WORDS[:4] and names != ("x0", "cap_1", "", "debit", "y[2,3]")
    assert pickle.loads(pickle.dumps(names)) == names
    assert Names.of(names) is names
    assert Names.of([]) == () and len(Names.of(())) == 0


def test_a_name_with_a_nul_character_is_refused():
    with pytest.raises(InvalidProblemDataError, match="NUL"):
        Names.of(["a", "b\0c"])


def test_a_problem_holds_its_names_compactly():
    problem = read_problem(miplib("p0201"))
    assert isinstance(problem.var_names, Names) and isinstance(problem.row_names, Names)
    by_string = sum(len(name) + 49 for name in problem.var_names)  # a short str is 49 + length
    assert problem.var_names.nbytes < by_string / 2
