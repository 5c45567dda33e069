#!/usr/bin/env bash
# Usage: replay.sh HARNESS PATH...
# Runs a libFuzzer harness once on every file under the PATHs (files or folders; missing ones are
# skipped): libFuzzer's replay mode, which takes inputs as file arguments and never writes. Fails
# when the harness crashes on, takes more than 10 s on, or finds a broken invariant in, any of them.
set -euo pipefail
harness=$1; shift
files=()
for p in "$@"; do
  [ -e "$p" ] || continue
  while IFS= read -r -d '' f; do files+=("$f"); done < <(find "$p" -type f -print0 | sort -z)
done
if [ "${#files[@]}" -eq 0 ]; then echo "no inputs"; exit 0; fi
echo "replaying ${#files[@]} inputs"
exec "$harness" -timeout=10 "${files[@]}"
