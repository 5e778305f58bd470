"""``python -m patchtx``: the ``patchtx`` command, for environments without its console script."""

from patchtx.cli import script

if __name__ == "__main__":
    script()
