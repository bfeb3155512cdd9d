"""test_progress.py: the progress bar of `stepprof summary` and `convert`.

Run by ctest as: test_progress.py STEPPROF_BINARY TRACE_JSON. Standard error
is given a pseudo-terminal (the pty module) or a pipe, and what was written to
it is read back whole. Nothing depends on timing: the bar is drawn on the
loader's last report whatever the redraw throttle did before, and the test
looks only at that last drawing and at the clearing after it.
"""
import os
import pty
import subprocess
import sys
import tempfile

CLEAR = "\r\x1b[K"


def run_on_pty(cmd, env):
    """Runs cmd with stderr on a pseudo-terminal; (exit code, stdout, stderr)."""
    master, slave = pty.openpty()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=slave, env=env)
    os.close(slave)
    err = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: the child closed its side
            break
        if not chunk:
            break
        err += chunk
    out = proc.stdout.read()
    proc.wait()
    os.close(master)
    return proc.returncode, out.decode(), err.decode(errors="replace")


def env_with(progress):
    env = dict(os.environ)
    env.pop("STEPPROF_PROGRESS", None)
    if progress is not None:
        env["STEPPROF_PROGRESS"] = progress
    return env


def check(cond, what):
    if not cond:
        sys.exit("FAIL: " + what)


def test_bar_on_terminal(cli, trace):
    name = os.path.basename(trace)
    rc, out, err = run_on_pty([cli, "summary", trace], env_with("1"))
    check(rc == 0, f"summary on a terminal exited {rc}: {err!r}")
    check("Overview Summary" in out or "Summary" in out, "summary printed no tables")
    drawings = [d for d in err.split("\r") if d.startswith("stepprof: reading")]
    check(drawings, f"no progress line on a terminal: {err!r}")
    last = drawings[-1]
    check(last.startswith(f"stepprof: reading {name} ["), f"the line names the file and has a bar: {last!r}")
    check("] 100%" in last and "#" * 24 in last, f"the last drawing is full: {last!r}")
    size_mb = f"{os.path.getsize(trace) / 1e6:.1f}"
    check(f"{size_mb}/{size_mb} MB" in last, f"the last drawing gives bytes read / total: {last!r}")
    check(err.endswith(CLEAR), f"the line is cleared at the end: {err[-40:]!r}")
    check("\n" not in err, f"the bar never leaves a line behind: {err!r}")


def test_convert_on_terminal(cli, trace):
    with tempfile.TemporaryDirectory() as tmp:
        dst = os.path.join(tmp, "out.pb")
        rc, _, err = run_on_pty([cli, "convert", trace, "-o", dst], env_with("1"))
        check(rc == 0 and os.path.getsize(dst) > 0, f"convert on a terminal failed: {err!r}")
        bar, cleared, rest = err.rpartition(CLEAR)
        check("stepprof: reading" in bar and cleared and "reading" not in rest,
              f"convert shows the bar and clears it before its own messages: {err!r}")
        check(rest.startswith("stepprof: writing"), f"convert's message follows the cleared line: {err!r}")


def test_off_by_environment(cli, trace):
    rc, _, err = run_on_pty([cli, "summary", trace], env_with("0"))
    check(rc == 0 and "reading" not in err, f"STEPPROF_PROGRESS=0 still drew: {err!r}")


def test_small_file_by_default(cli, trace):
    rc, _, err = run_on_pty([cli, "summary", trace], env_with(None))
    check(rc == 0 and "reading" not in err, f"a small file drew a bar by default: {err!r}")


def test_none_when_piped(cli, trace):
    run = subprocess.run([cli, "summary", trace], capture_output=True, env=env_with("1"), check=False)
    err = run.stderr.decode(errors="replace")
    check(run.returncode == 0, f"summary into a pipe exited {run.returncode}: {err!r}")
    check("reading" not in err and "\r" not in err and "\x1b" not in err,
          f"a bar went into a pipe: {err!r}")


def main():
    cli, trace = sys.argv[1], sys.argv[2]
    for test in (test_bar_on_terminal, test_convert_on_terminal, test_off_by_environment,
                 test_small_file_by_default, test_none_when_piped):
        test(cli, trace)
        print("ok", test.__name__)


if __name__ == "__main__":
    main()
