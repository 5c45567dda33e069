#!/usr/bin/env bash
# Usage: export_deepspeed_runs.sh -- COMMAND...
# Runs COMMAND (a `gpuplan plan ... --export deepspeed`), then runs the Megatron-DeepSpeed script
# it printed with a stand-in `torchrun` first on PATH. Passes when the script stops with a message
# while DATA_ARGS is unset, and with DATA_ARGS set writes a DeepSpeed config that parses as JSON
# and whose stage equals --zero-stage, and hands torchrun pretrain_gpt.py with --deepspeed_config
# naming that file and the data flags.
set -u
shift 1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$@" >"$dir/train.sh" 2>/dev/null || { echo "export failed: $*"; exit 1; }
mkdir "$dir/bin"
cat >"$dir/bin/torchrun" <<'SH'
#!/usr/bin/env bash
printf '%s\n' "$@" >"$TORCHRUN_ARGS"
SH
chmod +x "$dir/bin/torchrun"
export PATH="$dir/bin:$PATH" TORCHRUN_ARGS="$dir/args" DS_CONFIG="$dir/ds.json"
if err=$(env -u DATA_ARGS bash "$dir/train.sh" 2>&1); then
  echo "ran without DATA_ARGS"; exit 1
fi
case "$err" in
  *"set DATA_ARGS"*) ;;
  *) echo "no DATA_ARGS message: $err"; exit 1 ;;
esac
DATA_ARGS="--data-path corpus_text_document" bash "$dir/train.sh" || { echo "script failed"; exit 1; }
python3 - "$dir/ds.json" "$dir/args" <<'PY' || exit 1
import json, sys
config = json.load(open(sys.argv[1]))
args = open(sys.argv[2]).read().split("\n")
assert args[args.index("--deepspeed_config") + 1] == sys.argv[1], args
assert int(args[args.index("--zero-stage") + 1]) == config["zero_optimization"]["stage"], args
assert "pretrain_gpt.py" in args and "--deepspeed" in args, args
assert args[args.index("--data-path") + 1] == "corpus_text_document", args
PY
exit 0
