"""python -m stepprof run [OPTIONS] [--] SCRIPT [ARGS...]: `stepprof run`
for a script, run with this very Python (sys.executable), so that the
profiled program finds this stepprof package. The options are `stepprof
run`'s (`stepprof run --help`). Needs the stepprof tool: STEPPROF_CLI, or
`stepprof` on PATH; `python -m stepprof run -m MODULE` runs a module."""
import os
import shutil
import sys

_VALUED = {"--steps", "--ranks", "--out", "--targets", "--format", "--step-range", "--step-fn"}


def split(args):
    """(stepprof run's options, the program's arguments)."""
    i = 0
    while i < len(args):
        a = args[i]
        if a == "--":
            return args[:i], args[i + 1:]
        if a == "-m" or not a.startswith("-"):
            break
        i += 2 if a in _VALUED else 1
    return args[:i], args[i:]


def main(argv):
    if not argv or argv[0] != "run":
        sys.stderr.write("usage: python -m stepprof run [OPTIONS] [--] SCRIPT [ARGS...]\n")
        return 2
    cli = os.environ.get("STEPPROF_CLI") or shutil.which("stepprof")
    if not cli:
        sys.stderr.write("stepprof: the stepprof tool is not on PATH (or set STEPPROF_CLI); "
                         "install it with `make install`\n")
        return 127
    opts, program = split(argv[1:])
    if any(o in ("-h", "--help") for o in opts) or not program:
        os.execv(cli, [cli, "run", *opts])
    os.execv(cli, [cli, "run", *opts, "--", sys.executable, *program])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
