#!/usr/bin/env python3
"""PyTorch's own numbers for constants the cost model reads from PyTorch's code.

Usage (on a GPU machine with PyTorch, from the repository root):
    OUT=DIR python3 scripts/device_torch_checks.py

Measures, on GPU 0, and writes DIR/torch-checks.json (and prints it):
  attention   causal bf16 F.scaled_dot_product_attention forward and forward+backward, with
              PyTorch's flash backend (FlashAttention-2) and its cuDNN backend, b1 h32 d128 at
              2k-16k tokens: the FA2 / cuDNN speed ratio that frameworks.json's
              attention_kernels.relative_speed imputes (0.616 on Hopper).
              FLOPs as profiler/kernel_cases.h counts them: forward 2*b*h*s^2*d (causal),
              backward 2.5 x forward.
  loss        F.cross_entropy on an fp32 copy of bf16 logits (torchtitan, HF Trainer): the
              allocator's peak above the logits, per logit, in the forward and in the backward
              (frameworks.json loss_bytes_per_logit: 12 at the backward's peak).
  layer       one torchtitan-style Llama block (RMSNorm, wq/wk/wv, RoPE through complex
              multiply, repeat_kv, SDPA, wo, SwiGLU; bf16 weights as FSDP2's param_dtype): the
              bytes kept from the forward for the backward, per token, and the backward's
              transient peak above them.
  attention_lengths
              the same two backends at 16,384 tokens per launch, 512-16,384-token sequences
              (batch = 16,384 / seq, 16 heads of 128), as the FlashAttention-3 paper's benchmark
              that kAttentionHalfRateTokens (s0 = 400) is fitted on.
  sustained   bf16 8192^3 GEMMs back to back for 30 s: TFLOP/s, SM clock and power each second
              (what kSustainedGemmFraction's "sustained power limits" would show on one GPU).
CHECKS="name ..." runs only those. Each check runs on its own; one that fails is reported with
its error and the rest go on.
"""
import json
import os
import sys
import time
import traceback

import torch
import torch.nn.functional as F

DEV = "cuda"
BF16 = torch.bfloat16


def timed(fn, warmup=3, min_seconds=0.2):
    """Mean seconds per call of fn over at least min_seconds, after warmup calls (CUDA events)."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    calls = 1
    while True:
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(calls):
            fn()
        end.record()
        end.synchronize()
        seconds = start.elapsed_time(end) / 1e3
        if seconds >= min_seconds or calls >= 1 << 12:
            return seconds / calls
        calls *= 2


def sdpa_rows(b, h, s, d):
    """Causal bf16 F.scaled_dot_product_attention, forward and forward+backward, with PyTorch's
    flash backend (FlashAttention-2) and its cuDNN backend: one row each."""
    from torch.nn.attention import SDPBackend, sdpa_kernel

    q, k, v = (torch.randn(b, h, s, d, device=DEV, dtype=BF16, requires_grad=True)
               for _ in range(3))
    grad = torch.randn(b, h, s, d, device=DEV, dtype=BF16)
    fwd_flops = 2.0 * b * h * s * s * d
    rows = []
    for name, backend in (("flash", SDPBackend.FLASH_ATTENTION),
                          ("cudnn", SDPBackend.CUDNN_ATTENTION)):
        row = {"backend": name, "batch": b, "heads": h, "head_dim": d, "seq": s}
        try:
            with sdpa_kernel([backend]):
                def fwd():
                    with torch.no_grad():
                        F.scaled_dot_product_attention(q, k, v, is_causal=True)

                def fwd_bwd():
                    F.scaled_dot_product_attention(q, k, v, is_causal=True).backward(grad)

                t_f = timed(fwd)
                t_fb = timed(fwd_bwd)
            row.update(forward_s=t_f, forward_backward_s=t_fb,
                       forward_tflops=fwd_flops / t_f / 1e12,
                       backward_tflops=2.5 * fwd_flops / max(t_fb - t_f, 1e-12) / 1e12,
                       forward_backward_tflops=3.5 * fwd_flops / t_fb / 1e12)
        except Exception as e:  # a backend this build or GPU lacks
            row["error"] = f"{type(e).__name__}: {e}"
        rows.append(row)
    return rows


def attention():
    rows = []
    for s in (2048, 4096, 8192, 16384):
        for row in sdpa_rows(1, 32, s, 128):
            rows.append(row)
            print("attention", json.dumps(row), flush=True)
    ratios = []
    for s in (2048, 4096, 8192, 16384):
        by = {r["backend"]: r for r in rows if r["seq"] == s and "error" not in r}
        if "flash" in by and "cudnn" in by:
            ratios.append({"seq": s,
                           "flash_over_cudnn_forward":
                               by["cudnn"]["forward_s"] / by["flash"]["forward_s"],
                           "flash_over_cudnn_forward_backward":
                               by["cudnn"]["forward_backward_s"] /
                               by["flash"]["forward_backward_s"]})
    return {"rows": rows, "speed_ratios": ratios}


def loss():
    rows = []
    for tokens, vocab in ((8192, 128256), (4096, 128256), (8192, 32000)):
        logits = torch.randn(tokens, vocab, device=DEV, dtype=BF16, requires_grad=True)
        target = torch.randint(0, vocab, (tokens,), device=DEV)
        n = tokens * vocab
        row = {"tokens": tokens, "vocab": vocab}
        for variant in ("fp32_copy", "bf16"):
            torch.cuda.synchronize()
            start = torch.cuda.memory_allocated()
            torch.cuda.reset_peak_memory_stats()
            x = logits.float() if variant == "fp32_copy" else logits
            value = F.cross_entropy(x, target)
            del x
            torch.cuda.synchronize()
            fwd_peak = torch.cuda.max_memory_allocated() - start
            kept = torch.cuda.memory_allocated() - start
            torch.cuda.reset_peak_memory_stats()
            value.backward()
            torch.cuda.synchronize()
            bwd_peak = torch.cuda.max_memory_allocated() - start
            after = torch.cuda.memory_allocated() - start
            # Bytes per logit above the bf16 logits: the forward's peak, what it keeps for the
            # backward, the backward's peak (relative to before the forward), and what stays
            # (the logits' bf16 gradient).
            row[variant] = {"forward_peak": fwd_peak / n, "kept_for_backward": kept / n,
                            "backward_peak": bwd_peak / n, "after_backward": after / n}
            logits.grad = None
            del value
        rows.append(row)
        print("loss", json.dumps(row), flush=True)
        del logits, target
        torch.cuda.empty_cache()
    return rows


class Block(torch.nn.Module):
    """torchtitan's Llama 3 TransformerBlock (torchtitan/models/llama/model.py, 2024), eager."""

    def __init__(self, dim, heads, kv_heads, ffn):
        super().__init__()
        self.heads, self.kv_heads, self.head_dim = heads, kv_heads, dim // heads
        self.wq = torch.nn.Linear(dim, heads * self.head_dim, bias=False)
        self.wk = torch.nn.Linear(dim, kv_heads * self.head_dim, bias=False)
        self.wv = torch.nn.Linear(dim, kv_heads * self.head_dim, bias=False)
        self.wo = torch.nn.Linear(heads * self.head_dim, dim, bias=False)
        self.w1 = torch.nn.Linear(dim, ffn, bias=False)
        self.w2 = torch.nn.Linear(ffn, dim, bias=False)
        self.w3 = torch.nn.Linear(dim, ffn, bias=False)
        self.attention_norm = torch.nn.RMSNorm(dim, eps=1e-5)
        self.ffn_norm = torch.nn.RMSNorm(dim, eps=1e-5)

    def attention(self, x, freqs_cis):
        bs, seqlen, _ = x.shape
        xq = self.wq(x).view(bs, seqlen, self.heads, self.head_dim)
        xk = self.wk(x).view(bs, seqlen, self.kv_heads, self.head_dim)
        xv = self.wv(x).view(bs, seqlen, self.kv_heads, self.head_dim)
        xq_ = torch.view_as_complex(xq.float().reshape(*xq.shape[:-1], -1, 2))
        xk_ = torch.view_as_complex(xk.float().reshape(*xk.shape[:-1], -1, 2))
        f = freqs_cis.view(1, seqlen, 1, -1)
        xq = torch.view_as_real(xq_ * f).flatten(3).type_as(xv)
        xk = torch.view_as_real(xk_ * f).flatten(3).type_as(xv)
        rep = self.heads // self.kv_heads

        def repeat_kv(t):
            if rep == 1:
                return t
            b, s, n, d = t.shape
            return t[:, :, :, None, :].expand(b, s, n, rep, d).reshape(b, s, n * rep, d)

        keys, values = repeat_kv(xk), repeat_kv(xv)
        out = F.scaled_dot_product_attention(xq.transpose(1, 2), keys.transpose(1, 2),
                                             values.transpose(1, 2), is_causal=True)
        return self.wo(out.transpose(1, 2).contiguous().view(bs, seqlen, -1))

    def forward(self, x, freqs_cis):
        h = x + self.attention(self.attention_norm(x), freqs_cis)
        y = self.ffn_norm(h)
        return h + self.w2(F.silu(self.w1(y)) * self.w3(y))


def layer():
    rows = []
    for dim, heads, kv_heads, ffn, seq in ((4096, 32, 8, 14336, 8192),
                                           (4096, 32, 8, 14336, 2048),
                                           (8192, 64, 8, 28672, 4096)):
        block = Block(dim, heads, kv_heads, ffn).to(DEV, BF16)
        hd = dim // heads
        freqs = 1.0 / (500000.0 ** (torch.arange(0, hd, 2, device=DEV).float() / hd))
        angles = torch.outer(torch.arange(seq, device=DEV).float(), freqs)
        freqs_cis = torch.polar(torch.ones_like(angles), angles)
        x = torch.randn(1, seq, dim, device=DEV, dtype=BF16, requires_grad=True)
        for _ in range(2):  # the second pass is the measured one (cuBLAS workspaces exist)
            torch.cuda.synchronize()
            before = torch.cuda.memory_allocated()
            torch.cuda.reset_peak_memory_stats()
            out = block(x, freqs_cis)
            torch.cuda.synchronize()
            fwd_peak = torch.cuda.max_memory_allocated() - before
            kept = torch.cuda.memory_allocated() - before - out.numel() * out.element_size()
            grad = torch.randn_like(out)
            torch.cuda.synchronize()
            mid = torch.cuda.memory_allocated()
            torch.cuda.reset_peak_memory_stats()
            out.backward(grad)
            torch.cuda.synchronize()
            bwd_peak = torch.cuda.max_memory_allocated() - mid
            del out, grad
            block.zero_grad(set_to_none=True)
            x.grad = None
        row = {"hidden": dim, "heads": heads, "kv_heads": kv_heads, "ffn": ffn, "seq": seq,
               "kept_for_backward_bytes_per_token": kept / seq,
               "kept_for_backward_bytes_per_token_per_hidden": kept / seq / dim,
               "forward_peak_above_input_bytes_per_token": fwd_peak / seq,
               "backward_peak_above_start_bytes_per_token": bwd_peak / seq,
               "parameters": sum(p.numel() for p in block.parameters())}
        rows.append(row)
        print("layer", json.dumps(row), flush=True)
        del block, x, freqs_cis
        torch.cuda.empty_cache()
    return rows


def attention_lengths():
    rows = []
    for s in (512, 1024, 2048, 4096, 8192, 16384):
        for row in sdpa_rows(16384 // s, 16, s, 128):
            rows.append(row)
            print("attention_lengths", json.dumps(row), flush=True)
    return rows


def sustained():
    try:
        import pynvml
        pynvml.nvmlInit()
        handle = pynvml.nvmlDeviceGetHandleByIndex(0)
    except Exception:
        handle = None
    n = 8192
    a = torch.randn(n, n, device=DEV, dtype=BF16)
    bm = torch.randn(n, n, device=DEV, dtype=BF16)
    c = torch.empty(n, n, device=DEV, dtype=BF16)
    flops = 2.0 * n ** 3
    rows = []
    start = time.time()
    while time.time() - start < 30:
        t = timed(lambda: torch.mm(a, bm, out=c), warmup=0, min_seconds=1.0)
        row = {"t_s": round(time.time() - start, 2), "tflops": flops / t / 1e12}
        if handle is not None:
            row["sm_mhz"] = pynvml.nvmlDeviceGetClockInfo(handle, pynvml.NVML_CLOCK_SM)
            row["power_w"] = pynvml.nvmlDeviceGetPowerUsage(handle) / 1e3
            row["temp_c"] = pynvml.nvmlDeviceGetTemperature(handle, pynvml.NVML_TEMPERATURE_GPU)
        rows.append(row)
        print("sustained", json.dumps(row), flush=True)
    return rows


def main():
    out_dir = os.environ.get("OUT")
    if not out_dir:
        sys.exit("set OUT to the folder for the results")
    if not torch.cuda.is_available():
        sys.exit("no CUDA GPU visible to PyTorch")
    result = {
        "created_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "gpu": torch.cuda.get_device_name(0),
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "cudnn": torch.backends.cudnn.version(),
        "checks": {},
    }
    wanted = os.environ.get("CHECKS", "").split()
    for name, fn in (("attention", attention), ("loss", loss), ("layer", layer),
                     ("attention_lengths", attention_lengths), ("sustained", sustained)):
        if wanted and name not in wanted:
            continue
        start = time.time()
        try:
            result["checks"][name] = fn()
        except Exception:
            result["checks"][name] = {"error": traceback.format_exc()}
            print(name, "failed:", traceback.format_exc(), flush=True)
        print(f"== {name}: {time.time() - start:.1f} s", flush=True)
    path = os.path.join(out_dir, "torch-checks.json")
    with open(path, "w") as f:
        json.dump(result, f, indent=1)
    print("written", path)


if __name__ == "__main__":
    main()
