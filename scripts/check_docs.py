#!/usr/bin/env python3
"""Runs the commands shown in README.md and docs/*.md and checks that their output is the text
the documents show.

Usage: check_docs.py --bin-dir DIR [--bin-dir DIR...] [--repo ROOT] [--self-test | --update] [FILE...]

Every fenced block without a language tag must carry a marker on the line before it:
  <!-- check -->             the block starts with "$ command" lines (a trailing "\\" continues
                             a line); the rest of the block is their output
  <!-- check: COMMAND -->    the block is the output of COMMAND
  <!-- no-check: REASON -->  the block is not program output (a diagram, a list of commands)
Markdown that a command prints (not in a fence) sits between
  <!-- check-md: COMMAND --> and <!-- end-check -->.
A line "..." in the expected text stands for any number of output lines (abridged output).
Commands run under bash in a scratch folder that links the repository's top-level entries, with
the --bin-dir folders first on PATH, so "gpuplan ..." is the program just built. Standard output
and standard error are compared together, as a terminal shows them, trailing spaces ignored.

--self-test also changes one digit of each checked block's text and requires the comparison to
fail then: a number that changes in a document is always caught.

Exit status: 0 all blocks match, 1 a block differs or a command failed, 2 bad usage or an
unmarked block.
"""
import argparse
import difflib
import glob
import os
import re
import subprocess
import sys
import tempfile

FENCE = re.compile(r"^```(\S*)\s*$")
MARK = re.compile(r"^<!--\s*(check|no-check|check-md)(?::\s*(.*?))?\s*-->\s*$")
END_MD = re.compile(r"^<!--\s*end-check\s*-->\s*$")


class Block:
    """One checked piece of a document."""

    def __init__(self, path, line, commands, expected):
        self.path = path          # document
        self.line = line          # 1-based line of the first expected line
        self.commands = commands  # shell commands, run in order
        self.expected = expected  # list of lines


class UsageError(Exception):
    pass


def split_commands(lines):
    """"$ cmd \\" continuation lines at the top of a block -> (commands, rest)."""
    commands, i = [], 0
    while i < len(lines) and lines[i].startswith("$ "):
        cmd = lines[i][2:]
        while cmd.endswith("\\") and i + 1 < len(lines):
            i += 1
            cmd = cmd[:-1].rstrip() + " " + lines[i].strip()
        commands.append(cmd)
        i += 1
    return commands, lines[i:]


def closing(lines, start, pattern, error):
    """Index of the first line after `start` that matches `pattern`; UsageError(error) if none."""
    for j in range(start + 1, len(lines)):
        if pattern.match(lines[j]):
            return j
    raise UsageError(error)


def parse(path):
    """The checked blocks of one document; raises UsageError for unmarked or malformed ones."""
    lines = open(path, encoding="utf-8").read().split("\n")
    blocks, marker, i = [], None, 0
    while i < len(lines):
        text = lines[i]
        m = MARK.match(text)
        if m:
            kind, arg = m.group(1), m.group(2)
            if kind == "check-md":
                if not arg:
                    raise UsageError(f"{path}:{i + 1}: check-md needs a command")
                j = closing(lines, i, END_MD, f"{path}:{i + 1}: check-md without <!-- end-check -->")
                body = lines[i + 1:j]
                while body and not body[0].strip():
                    body, i = body[1:], i + 1
                while body and not body[-1].strip():
                    body = body[:-1]
                blocks.append(Block(path, i + 2, [arg], body))
                i = j + 1
                continue
            marker = (kind, arg, i + 1)
            i += 1
            continue
        f = FENCE.match(text)
        if f:
            j = closing(lines, i, FENCE, f"{path}:{i + 1}: unclosed code fence")
            body = lines[i + 1:j]
            if marker and marker[2] == i:  # the marker sits on the line before the fence
                kind, arg, _ = marker
                if kind == "check":
                    commands, rest = split_commands(body)
                    first = i + 2 + (len(body) - len(rest))
                    if arg:
                        commands = [arg] + commands
                    if not commands:
                        raise UsageError(f"{path}:{i + 1}: <!-- check --> block has no "
                                         "'$ command' line; give the command in the marker")
                    blocks.append(Block(path, first, commands, rest))
            elif not f.group(1):
                raise UsageError(
                    f"{path}:{i + 1}: code block without a language and without a marker: put "
                    "<!-- check -->, <!-- check: COMMAND --> or <!-- no-check: REASON --> on "
                    "the line before it")
            marker = None
            i = j + 1
            continue
        i += 1
    return blocks


def matches(expected, actual):
    """Line-wise match where an expected '...' line stands for any run of actual lines."""
    exp = [e.rstrip() for e in expected]
    act = [a.rstrip() for a in actual]
    # reach[j]: the first i expected lines can match the first j actual lines.
    reach = [True] + [False] * len(act)
    for e in exp:
        nxt = [False] * (len(act) + 1)
        if e.strip() == "...":
            seen = False
            for j in range(len(act) + 1):
                seen = seen or reach[j]
                nxt[j] = seen
        else:
            for j in range(len(act)):
                if reach[j] and act[j] == e:
                    nxt[j + 1] = True
        reach = nxt
    return reach[len(act)]


def link_repo(repo, tmp):
    """Links the repository's top-level entries into `tmp`, for commands that write files."""
    for name in os.listdir(repo):
        if name.startswith(".") or name == "build" or name.startswith("build-"):
            continue
        os.symlink(os.path.join(repo, name), os.path.join(tmp, name))


def run(block, cwd, env):
    """Output lines of the block's commands; None and a message when one fails to start."""
    out = []
    for cmd in block.commands:
        proc = subprocess.run(["bash", "-c", cmd + " 2>&1"], cwd=cwd, env=env,
                              stdout=subprocess.PIPE, stdin=subprocess.DEVNULL, timeout=600)
        text = proc.stdout.decode("utf-8", "replace")
        out.extend(text.rstrip("\n").split("\n") if text else [])
    return out


def mutate(expected):
    """The expected text with the first digit changed; None when it has no digit."""
    for k, line in enumerate(expected):
        m = re.search(r"\d", line)
        if m:
            d = str((int(m.group()) + 1) % 10)
            changed = list(expected)
            changed[k] = line[:m.start()] + d + line[m.end():]
            return changed
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bin-dir", action="append", required=True,
                    help="folder with the built programs (repeatable)")
    ap.add_argument("--repo", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    ap.add_argument("--self-test", action="store_true")
    ap.add_argument("--update", action="store_true",
                    help="rewrite each differing block with the program's output, keeping its "
                         "'...' abridgements (review the diff before committing)")
    ap.add_argument("files", nargs="*")
    args = ap.parse_args()
    repo = os.path.abspath(args.repo)
    files = args.files or [os.path.join(repo, "README.md")] + sorted(
        glob.glob(os.path.join(repo, "docs", "*.md")))
    try:
        blocks = [b for f in files for b in parse(f)]
    except (UsageError, OSError) as e:
        print(f"check_docs: {e}", file=sys.stderr)
        return 2
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join(os.path.abspath(d) for d in args.bin_dir) + os.pathsep + \
        env.get("PATH", "")
    env["COLUMNS"] = "100"
    with tempfile.TemporaryDirectory(prefix="gpuplan-docs-") as cwd:
        link_repo(repo, cwd)
        failed = check(blocks, repo, cwd, env, args.self_test, args.update)
    print(f"{len(blocks) - failed} passed, {failed} failed")
    return 1 if failed else 0


def abridged_like(expected, actual):
    """`actual` cut to the shape of `expected`: as many leading and trailing lines, and each
    segment between two '...' lines taken where its first line occurs; None if one is missing."""
    marks = [k for k, e in enumerate(expected) if e.strip() == "..."]
    if not marks:
        return list(actual)
    head, tail = marks[0], len(expected) - 1 - marks[-1]
    if head + tail > len(actual):
        return None
    out = actual[:head] + [expected[marks[0]]]
    pos = head
    for a, b in zip(marks, marks[1:]):
        segment = expected[a + 1:b]
        if segment:
            try:
                at = actual.index(segment[0], pos)
            except ValueError:
                return None
            out += actual[at:at + len(segment)]
            pos = at + len(segment)
        out.append(expected[b])
    return out + (actual[len(actual) - tail:] if tail else [])


def update(block, actual):
    """Rewrites `block` in its document with `actual` (abridged like the block); False if the
    shape cannot be kept."""
    new = abridged_like(block.expected, actual)
    if new is None or not matches(new, actual):
        return False
    lines = open(block.path, encoding="utf-8").read().split("\n")
    start = block.line - 1
    lines[start:start + len(block.expected)] = new
    open(block.path, "w", encoding="utf-8").write("\n".join(lines))
    return True


def check(blocks, repo, cwd, env, self_test, rewrite=False):
    """Runs and compares every block, printing one line each; returns how many failed. With
    `rewrite`, differing blocks are updated (last first, so earlier line numbers stay valid)."""
    failed = 0
    for b in sorted(blocks, key=lambda x: (x.path, -x.line)) if rewrite else blocks:
        where = f"{os.path.relpath(b.path, repo)}:{b.line}"
        actual = run(b, cwd, env)
        if rewrite and not matches(b.expected, actual):
            done = update(b, actual)
            failed += 0 if done else 1
            print(f"{'updated' if done else 'CANNOT UPDATE'} {where}")
            continue
        if not matches(b.expected, actual):
            failed += 1
            print(f"FAIL {where}: output of `{' ; '.join(b.commands)}` differs from the document")
            for d in difflib.unified_diff(b.expected, actual, "document", "program", lineterm="",
                                          n=2):
                print("    " + d)
            continue
        if self_test:
            changed = mutate(b.expected)
            if changed is not None and matches(changed, actual):
                failed += 1
                print(f"FAIL {where}: a changed number would not be detected")
                continue
        print(f"ok   {where}: {' ; '.join(b.commands)[:90]}")
    return failed


if __name__ == "__main__":
    sys.exit(main())
