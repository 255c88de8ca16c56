"""Command-line entry points (Hydra apps). The library never imports this package."""
