"""Neighborhood selectors for the LNS loop; see :mod:`heuristics.registry` for the names."""
from heuristics.base import Neighborhood, SearchState, Selector
from heuristics.registry import SELECTORS, make_selector, selector_class

__all__ = ["Neighborhood", "SearchState", "Selector", "SELECTORS", "make_selector", "selector_class"]
