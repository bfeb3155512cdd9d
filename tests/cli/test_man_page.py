"""test_man_page.py: docs/stepprof.1 keeps up with the CLI it describes.

Run by ctest as: test_man_page.py STEPPROF_BINARY MAN_PAGE. Reads the
commands that `stepprof --help` lists and the options that it and each
`stepprof COMMAND --help` print, and checks that the man page describes each
command (a tag in its COMMANDS section) and names each option, that every
command it describes is one the tool accepts, and that its title carries the
version `stepprof --version` prints. Needs neither man nor groff: the roff
source is read as text.
"""
import re
import subprocess
import sys

OPTION = re.compile(r"(?<![\w-])(--?[a-z][a-z0-9-]*)")


def help_text(cli, *args):
    run = subprocess.run([cli, *args], capture_output=True, text=True, check=False)
    if run.returncode != 0:
        sys.exit(f"FAIL: {' '.join([cli, *args])} exited with {run.returncode}: {run.stderr}")
    return run.stdout


def listed_commands(usage):
    """The names in the 'commands:' block of `stepprof --help`."""
    names, inside = [], False
    for line in usage.splitlines():
        if line.strip() == "commands:":
            inside = True
        elif inside and not line.strip():
            break
        elif inside:
            m = re.match(r"\s+([a-z][a-z0-9-]*)\b", line)
            if m:
                names.append(m.group(1))
    return names


def roff_text(source):
    """The man page's text with roff escapes for dashes and fonts removed."""
    text = source.replace("\\-", "-")
    text = re.sub(r"\\f(\[[^]]*\]|\(..|.)", "", text)
    return text


def described_commands(text):
    """The first word of each tag (.TP line after) in the COMMANDS section."""
    m = re.search(r"^\.SH COMMANDS\n(.*?)^\.SH ", text, re.S | re.M)
    if not m:
        sys.exit("FAIL: the man page has no COMMANDS section")
    tags = re.findall(r"^\.TP\n\.[A-Z]*\s*\"?([a-z][a-z0-9-]*)", m.group(1), re.M)
    return tags


def main():
    cli, page = sys.argv[1], sys.argv[2]
    with open(page, encoding="utf-8") as f:
        text = roff_text(f.read())
    usage = help_text(cli, "--help")
    commands = listed_commands(usage)
    if not commands:
        sys.exit("FAIL: found no commands in `stepprof --help`:\n" + usage)
    failures = []

    described = described_commands(text)
    for name in commands:
        if name not in described:
            failures.append(f"command '{name}' (stepprof --help) is not described in COMMANDS")
    for name in described:  # `stepprof help` takes no --help: either form may answer
        if all(subprocess.run(args, capture_output=True, check=False).returncode != 0
               for args in ([cli, name, "--help"], [cli, name])):
            failures.append(f"the man page describes '{name}', which stepprof does not accept")

    helps = {"stepprof --help": usage}
    for name in commands:
        helps[f"stepprof {name} --help"] = help_text(cli, name, "--help")
    words = set(re.findall(r"(?<![\w-])--?[a-z][a-z0-9.-]*", text))
    for source, body in helps.items():
        for option in sorted(set(OPTION.findall(body))):
            if option not in words:
                failures.append(f"option '{option}' ({source}) is not in the man page")

    version = help_text(cli, "--version").strip()
    title = re.search(r"^\.TH .*$", text, re.M)
    if not title or f'"{version}"' not in title.group(0):
        failures.append(f"the .TH line does not carry '{version}' (stepprof --version)")

    for failure in failures:
        print("FAIL:", failure)
    if failures:
        sys.exit(1)
    print(f"man page: {len(commands)} commands and every --help option of them described; {version}")


if __name__ == "__main__":
    main()
