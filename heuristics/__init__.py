"""Neighborhood selectors for the LNS loop.

The protocol is :mod:`lns.core.search.selection`; the selectors' names are in :mod:`lns.registry`.
"""
