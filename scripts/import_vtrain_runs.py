#!/usr/bin/env python3
"""Turns vTrain's measured multi-node runs into gpuplan's published-runs format.

Usage: import_vtrain_runs.py [--repo ROOT] [--check]

Reads hardware-db/calibration/vtrain/ground_truth_multi.csv (VIA-Research/vTrain
data/ground_truth_multi.csv at commit f8dda847, copied unchanged) and writes
hardware-db/calibration/vtrain_runs.json: one run per line, with the settings the CSV does not
state filled in from vTrain's validation configs (config/validation/multi/*.json at the same
commit) and listed in each run's `imputed`. hardware-db/calibration/README.md describes both.

--check writes nothing and exits 1 when the JSON file differs from what the CSV gives, so that
the two cannot drift apart (ctest `calibration.vtrain_runs_match_the_csv`).

Exit status: 0 written or matching, 1 differs, 2 bad input (a missing file, a malformed line).
"""
import argparse
import csv
import json
import os
import sys

CSV_PATH = "hardware-db/calibration/vtrain/ground_truth_multi.csv"
JSON_PATH = "hardware-db/calibration/vtrain_runs.json"
HEADER = [
    "Parameters (billion)", "# GPUs", "global batch", "micro batch", "hidden size",
    "attention heads", "# layers", "sequence length", "tensor parallelism", "data parallelism",
    "pipeline parallelism", "iteration time (ms)"
]
SOURCE = ("Bang et al., \"vTrain: A Simulation Framework for Evaluating Cost-effective and "
          "Compute-optimal Large Language Model Training\", MICRO 2024, arXiv:2312.12391: "
          "measured validation runs, VIA-Research/vTrain data/ground_truth_multi.csv @f8dda847")
ABOUT = (
    "Held-out runs: vTrain's 109 measured multi-node iterations (Megatron-DeepSpeed, GPT models "
    "of 3.6B-175B parameters on 64-512 A100 GPUs), generated from vtrain/ground_truth_multi.csv "
    "by scripts/import_vtrain_runs.py. Not fitted on: no constant of gpuplan was chosen with "
    "them. measured.tokens_per_s_per_gpu = global batch x sequence length / iteration time / "
    "GPUs.")
# What every run shares, from vTrain's validation configs (config/validation/multi/*.json) and
# its model (src/predictor.py, src/model/gpt_model.py): each config sets use_checkpoint true,
# use_gradient_bucket false, pipeline_scheduling 1f1b, node_size 8, inter_node_bandwidth 800
# (Gbps per node) and gpu_name A100; the model is Megatron's GPT with vocab_size 50257, learned
# position embeddings, biases, GeLU MLP of 4h and fp16 weights.
IMPUTED = [
    "gpu=a100-sxm4-80gb (vTrain names 'A100'; the 175B runs at TP2 PP32 keep 2.7B parameters "
    "and their optimizer state per GPU, more than 40 GB)",
    "inter_node=ib-edr-100 (vTrain's configs state 800 Gb/s per 8-GPU node, 100 Gb/s per GPU; "
    "the fabric is not stated: ib-edr-100 is the database's 100 Gb/s-per-GPU InfiniBand)",
    "precision=fp16, vocab_size=50257, tied_embeddings=true, ffn_hidden_size=4h "
    "(Megatron GPT as vTrain's model builds it)",
    "recompute=full (use_checkpoint: true), dp_overlap=false (use_gradient_bucket: false: the "
    "gradients are all-reduced after the backward), schedule=1f1b",
    "attention=unfused (vTrain's model runs Megatron's fused scale-mask-softmax over "
    "materialised scores, not FlashAttention)",
    "framework=deepspeed, zero_stage=1 (Megatron-DeepSpeed runs under a DeepSpeed config, whose "
    "ZeRO stage vTrain does not state; stage 1, the optimizer state sharded over data "
    "parallelism, is the stage of Megatron-DeepSpeed's example and BigScience scripts, and "
    "without it the 3.6B runs at TP1 DP64 micro-batch 8, which ran on 80 GB, would need 88.8 GB "
    "by gpuplan's memory model; the step time moves by under 1%)",
]


def ToInt(text, line, column):
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value <= 0:
        raise ValueError(f"{CSV_PATH}: line {line}: column '{column}': must be a positive "
                         f"integer, got '{text}'")
    return value


def Run(row, line):
    cells = dict(zip(HEADER, row))
    v = {c: ToInt(cells[c], line, c) for c in HEADER[1:11]}
    try:
        ms = float(cells["iteration time (ms)"])
    except ValueError:
        ms = 0
    if not ms > 0:
        raise ValueError(f"{CSV_PATH}: line {line}: column 'iteration time (ms)': must be a "
                         f"positive number, got '{cells['iteration time (ms)']}'")
    gpus, batch, seq = v["# GPUs"], v["global batch"], v["sequence length"]
    tp, dp, pp = (v["tensor parallelism"], v["data parallelism"], v["pipeline parallelism"])
    mb = v["micro batch"]
    if tp * dp * pp != gpus:
        raise ValueError(f"{CSV_PATH}: line {line}: tp x dp x pp = {tp * dp * pp}, but the "
                         f"line has {gpus} GPUs")
    size = cells["Parameters (billion)"]
    h = v["hidden size"]
    return {
        "id": f"vtrain_{size}B_tp{tp}_pp{pp}_dp{dp}_mb{mb}_line{line}",
        "source": SOURCE,
        "source_location": f"ground_truth_multi.csv line {line}",
        "spec": {
            "model": {
                "name": f"GPT {size}B (vTrain)",
                "num_layers": v["# layers"],
                "hidden_size": h,
                "ffn_hidden_size": 4 * h,
                "num_attention_heads": v["attention heads"],
                "num_kv_heads": v["attention heads"],
                "vocab_size": 50257,
                "mlp": "gelu",
                "tied_embeddings": True,
            },
            "cluster": {"gpu": "a100-sxm4-80gb", "num_gpus": gpus, "gpus_per_node": 8,
                        "inter_node": "ib-edr-100"},
            "training": {"seq_len": seq, "global_batch_size": batch, "micro_batch_size": mb,
                         "precision": "fp16", "recompute": "full", "attention": "unfused",
                         "framework": "deepspeed"},
            "parallelism": {"tp": tp, "pp": pp, "dp": dp, "cp": 1, "ep": 1, "vpp": 1,
                            "sequence_parallel": False, "zero_stage": 1, "fsdp": False,
                            "schedule": "1f1b", "dp_overlap": False},
        },
        "measured": {"tokens_per_s_per_gpu": round(batch * seq / (ms / 1000) / gpus, 3),
                     "derived_from": "iteration_time_s"},
        "imputed": IMPUTED,
        "notes": f"iteration time {cells['iteration time (ms)']} ms",
    }


def Document(repo):
    path = os.path.join(repo, CSV_PATH)
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    if not rows or rows[0] != HEADER:
        raise ValueError(f"{CSV_PATH}: line 1: the header must be {','.join(HEADER)}")
    runs = []
    for line, row in enumerate(rows[1:], start=2):
        if len(row) != len(HEADER):
            raise ValueError(f"{CSV_PATH}: line {line}: {len(row)} columns, the header has "
                             f"{len(HEADER)}")
        runs.append(Run(row, line))
    return json.dumps({"about": ABOUT, "runs": runs}, indent=1) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", default=os.path.join(os.path.dirname(__file__), ".."))
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()
    try:
        text = Document(args.repo)
    except (OSError, ValueError) as e:
        print(f"import_vtrain_runs.py: {e}", file=sys.stderr)
        return 2
    target = os.path.join(args.repo, JSON_PATH)
    if args.check:
        try:
            with open(target) as f:
                same = f.read() == text
        except OSError as e:
            print(f"import_vtrain_runs.py: {e}", file=sys.stderr)
            return 2
        if not same:
            print(f"import_vtrain_runs.py: {JSON_PATH} differs from what {CSV_PATH} gives: "
                  f"run scripts/import_vtrain_runs.py", file=sys.stderr)
            return 1
        return 0
    with open(target + ".tmp", "w") as f:
        f.write(text)
    os.replace(target + ".tmp", target)
    return 0


if __name__ == "__main__":
    sys.exit(main())
