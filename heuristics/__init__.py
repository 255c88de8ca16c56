"""Neighborhood selectors for the LNS loop.

The protocol is :mod:`lns.core.selection`; the selectors' names are in :mod:`lns.registry`.
"""
