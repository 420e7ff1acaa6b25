#!/usr/bin/env python3
"""PyTorch/CUDA reference figures for the peer benchmarks (peers/README.md).

Prints a Markdown table of what PyTorch (cuBLAS, its own CUDA kernels)
reaches on the same card: the ceilings the wgpu programs are compared with.

Timing: CUDA events around `iters` back-to-back calls, divided by `iters`;
3 warm-up calls first, then the median of 7 such batches. On a machine
without CUDA the same script runs on the CPU with small sizes and
`time.perf_counter` (to check that it works, not for the figures).

usage: python3 reference.py [--only KEY,...] [--cpu] [--small] [--list]
"""

import argparse
import statistics
import sys
import time

import torch

KEYS = ["vadd", "sgemm", "hgemm", "bf16gemm", "softmax", "softmax-f16",
        "layernorm", "layernorm-f16", "attn-scores"]


def make_timer(dev):
    """Returns time_it(fn, iters, batches) -> median seconds per call."""
    if dev == "cuda":
        def time_it(fn, iters, batches=7):
            for _ in range(3):
                fn()
            torch.cuda.synchronize()
            samples = []
            for _ in range(batches):
                start = torch.cuda.Event(enable_timing=True)
                end = torch.cuda.Event(enable_timing=True)
                start.record()
                for _ in range(iters):
                    fn()
                end.record()
                torch.cuda.synchronize()
                samples.append(start.elapsed_time(end) / 1e3 / iters)
            return statistics.median(samples)
    else:
        def time_it(fn, iters, batches=7):
            for _ in range(3):
                fn()
            samples = []
            for _ in range(batches):
                t0 = time.perf_counter()
                for _ in range(iters):
                    fn()
                samples.append((time.perf_counter() - t0) / iters)
            return statistics.median(samples)
    return time_it


def check(name, got, want, rtol, atol):
    """Raises if `got` and `want` (compared in float64) differ."""
    got = got.double().cpu()
    want = want.double().cpu()
    if not torch.allclose(got, want, rtol=rtol, atol=atol):
        err = (got - want).abs().max().item()
        raise AssertionError(f"{name}: max abs error {err:.3g}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", help="comma-separated keys: " + ",".join(KEYS))
    ap.add_argument("--cpu", action="store_true", help="run on the CPU even if CUDA is available")
    ap.add_argument("--small", action="store_true", help="small sizes (automatic on the CPU)")
    ap.add_argument("--list", action="store_true", help="print the keys and exit")
    args = ap.parse_args()
    if args.list:
        print("\n".join(KEYS))
        return
    only = None
    if args.only:
        only = [k.strip() for k in args.only.split(",") if k.strip()]
        bad = [k for k in only if k not in KEYS]
        if bad:
            sys.exit(f"unknown keys {bad}; known: {KEYS}")

    dev = "cuda" if torch.cuda.is_available() and not args.cpu else "cpu"
    small = args.small or dev == "cpu"
    # Full-precision SGEMM (no TF32) and, for f16/bf16, f32 accumulation with
    # no reduced-precision split-K reductions (cuBLAS compute type 32F).
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = False
    torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction = False
    time_it = make_timer(dev)
    torch.manual_seed(0)

    name = torch.cuda.get_device_name() if dev == "cuda" else "CPU"
    print(f"# PyTorch {torch.__version__} reference on {name}"
          f"{' (CUDA ' + torch.version.cuda + ')' if dev == 'cuda' else ''}\n")
    clock = "CUDA events" if dev == "cuda" else "time.perf_counter"
    print(f"Time per call from {clock} (median of 7 batches after warm-up); TF32 off; "
          "f16/bf16 GEMMs accumulate in f32 (reduced-precision reductions off)."
          + (" SMALL SIZES (CPU run or --small): not the reference figures." if small else "") + "\n")
    print("| benchmark | size | dtype | time (ms) | rate | unit | notes |")
    print("| --- | --- | --- | --- | --- | --- | --- |")

    def row(what, size, dtype, seconds, rate, unit, notes="verified"):
        # Two decimals, or three significant digits for small rates.
        shown = f"{rate:.2f}" if rate >= 10 else f"{rate:.3g}"
        print(f"| {what} | {size} | {dtype} | {seconds * 1e3:.3f} | {shown} | {unit} | {notes} |", flush=True)

    def run(key, fn):
        if only is not None and key not in only:
            return
        try:
            fn()
        except Exception as e:  # one failing row must not end the table
            msg = str(e).replace("\n", " ").replace("|", "/")[:200]
            print(f"| {key} | | | — | — | | FAILED: {type(e).__name__}: {msg} |", flush=True)

    # Vector add, 64 Mi f32: two reads and one write (12 bytes per element).
    def vadd():
        n = (1 << 20) if small else (1 << 26)
        a = torch.rand(n, device=dev)
        b = torch.rand(n, device=dev)
        o = torch.empty_like(a)
        torch.add(a, b, out=o)
        check("vadd", o[:4096], a[:4096].double() + b[:4096].double(), 1e-6, 1e-6)
        dt = time_it(lambda: torch.add(a, b, out=o), 50)
        row("vector add", "64 Mi" if n == 1 << 26 else str(n), "float32", dt, 12 * n / dt / 1e9, "GB/s")

    def gemm(key, dtype, n, label):
        def f():
            a = torch.rand(n, n, device=dev, dtype=dtype) - 0.5
            b = torch.rand(n, n, device=dev, dtype=dtype) - 0.5
            o = a @ b
            # Spot-check 4 rows in float64.
            want = a[:4].double() @ b.double()
            tol = 2e-2 if dtype != torch.float32 else 1e-4
            check(label, o[:4], want, tol, tol * (n ** 0.5) * 0.1)
            dt = time_it(lambda: torch.mm(a, b, out=o), 10 if n >= 4096 else 20)
            row(label, f"{n}³", str(dtype).replace("torch.", ""), dt, 2 * n ** 3 / dt / 1e12, "TFLOP/s")
        run(key, f)

    # Row softmax / layer norm over rows × cols: one read + one write.
    def rowwise(key, label, dtype, op):
        def f():
            rows, cols = (256, 1024) if small else (4096, 4096)
            x = (torch.rand(rows, cols, device=dev) * 8 - 4).to(dtype)
            if op == "softmax":
                fn = lambda: torch.softmax(x, dim=-1)
                y = fn()
                check(label, y[:8], torch.softmax(x[:8].double(), dim=-1), 1e-2 if dtype != torch.float32 else 1e-5, 1e-4)
            else:
                w = (1 + 0.1 * (torch.rand(cols, device=dev) - 0.5)).to(dtype)
                b = (0.1 * (torch.rand(cols, device=dev) - 0.5)).to(dtype)
                fn = lambda: torch.nn.functional.layer_norm(x, (cols,), w, b, eps=1e-5)
                y = fn()
                want = torch.nn.functional.layer_norm(x[:8].double(), (cols,), w.double(), b.double(), eps=1e-5)
                check(label, y[:8], want, 1e-2, 2e-2 if dtype != torch.float32 else 1e-4)
            dt = time_it(fn, 50)
            nbytes = 2 * rows * cols * x.element_size()
            row(label, f"{rows}×{cols}", str(dtype).replace("torch.", ""), dt, nbytes / dt / 1e9, "GB/s",
                "verified; bytes = one read + one write")
        run(key, f)

    # Attention scores: softmax(Q·Kᵀ·scale) over rows, f16, one head:
    # Q, K of 4096 × 128. The scale is folded into Q's GEMM through
    # torch.addmm's alpha (one GEMM + one softmax kernel).
    def attn():
        s, d = (256, 64) if small else (4096, 128)
        q = torch.randn(s, d, device=dev, dtype=torch.float16)
        k = torch.randn(s, d, device=dev, dtype=torch.float16)
        scale = d ** -0.5
        zero = torch.zeros(s, s, device=dev, dtype=torch.float16)

        def fn():
            return torch.softmax(torch.addmm(zero, q, k.t(), beta=0, alpha=scale), dim=-1)

        y = fn()
        want = torch.softmax((q[:8].double() @ k.double().t()) * scale, dim=-1)
        check("attention scores", y[:8], want, 2e-2, 1e-3)
        dt = time_it(fn, 50)
        row("attention scores softmax(Q·Kᵀ·scale), one head", f"{s}×{s}, d={d}", "float16", dt,
            2 * s * s * d / dt / 1e12, "TFLOP/s",
            "verified; time is GEMM + softmax; rate counts the GEMM's 2·s²·d flops only")

    run("vadd", vadd)
    gemm("sgemm", torch.float32, 256 if small else 4096, "SGEMM (TF32 off)")
    gemm("hgemm", torch.float16, 256 if small else 8192, "f16 GEMM, f32 accumulate")
    gemm("bf16gemm", torch.bfloat16, 256 if small else 8192, "bf16 GEMM, f32 accumulate")
    rowwise("softmax", "row softmax", torch.float32, "softmax")
    rowwise("softmax-f16", "row softmax", torch.float16, "softmax")
    rowwise("layernorm", "layer norm (weight, bias)", torch.float32, "layernorm")
    rowwise("layernorm-f16", "layer norm (weight, bias)", torch.float16, "layernorm")
    run("attn-scores", attn)


if __name__ == "__main__":
    main()
