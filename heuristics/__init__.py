"""Neighborhood selectors for the LNS loop (the protocol is :mod:`lns.core.selection`; names in :mod:`lns.registry`)."""
