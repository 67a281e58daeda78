import sys


def _name(argv: list[str]) -> str:
    """'ppk sp tables' from the arguments, without argparse (which may not be loaded yet)."""
    words: list[str] = []
    for arg in argv:
        if arg.startswith("-"):
            break
        words.append(arg)
        if len(words) == 2 or words[0] not in ("sp", "risk", "pk", "samplers"):
            break
    return " ".join(["ppk", *words])


def _run() -> int:
    # Loading ppk takes most of a second (numpy, mpmath, the C++ module): Ctrl-C then is answered as
    # main() answers it during a command -- one line on stderr, exit 130 -- not with a traceback.
    try:
        from .cli import main
    except KeyboardInterrupt:
        print(f"\n{_name(sys.argv[1:])}: interrupted", file=sys.stderr)
        return 130
    return main()


sys.exit(_run())
