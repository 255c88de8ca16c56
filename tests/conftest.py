import signal
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))


def pytest_configure(config):
    """Ctrl-C as Python's default also where the run started with SIGINT ignored (a shell's
    background job): the interrupt tests send this process SIGINT."""
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
