"""``python -m patchtx.cli``: the ``patchtx`` command, as ``python -m patchtx``."""

from . import script

if __name__ == "__main__":
    script()
