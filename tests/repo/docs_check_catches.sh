#!/usr/bin/env bash
# Usage: docs_check_catches.sh REPO BIN_DIR
# The README check fails when a number in README.md changes (exit 1, naming the line), and
# refuses a document with an output block that carries no marker (exit 2).
set -uo pipefail
repo=$1 bin=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
check=("$repo/scripts/check_docs.py" --bin-dir "$bin" --repo "$repo")
fail() { echo "docs check test: $*"; exit 1; }

# README.md with the first digit of the first "tokens/s per GPU" value changed.
python3 - "$repo/README.md" "$tmp/README.md" <<'PY'
import re, sys
text = open(sys.argv[1], encoding="utf-8").read()
m = re.search(r"(?m)^  tokens/s per GPU +(\d)", text)
digit = str((int(m.group(1)) + 1) % 10)
open(sys.argv[2], "w", encoding="utf-8").write(text[:m.start(1)] + digit + text[m.end(1):])
PY
out=$(python3 "${check[@]}" "$tmp/README.md" 2>&1); code=$?
[ "$code" -eq 1 ] || fail "a changed number exited $code, not 1: $out"
grep -q "^FAIL .*README.md:" <<<"$out" || fail "no FAIL line names README.md: $out"
grep -q "^    +  tokens/s per GPU" <<<"$out" || fail "the diff does not show the line: $out"

printf 'Output:\n\n```\nstep time 1.0 s\n```\n' >"$tmp/unmarked.md"
out=$(python3 "${check[@]}" "$tmp/unmarked.md" 2>&1); code=$?
[ "$code" -eq 2 ] || fail "an unmarked block exited $code, not 2: $out"
grep -q "unmarked.md:3: code block without a language and without a marker" <<<"$out" ||
  fail "the message does not name the block: $out"
echo "a changed number and an unmarked block are both caught"
