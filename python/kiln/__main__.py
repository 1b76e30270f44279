"""`kiln` on the command line (the wheel's console script) and `python -m kiln`: the bundled
executable itself, with the same arguments, exit status and output."""
import os
import sys

from ._compile import executable


def main() -> None:
    exe = str(executable())
    # exec, not a child process: signals (Ctrl-C during a compile) reach kiln directly and its
    # exit status is ours.
    os.execv(exe, [exe, *sys.argv[1:]])


if __name__ == "__main__":
    main()
