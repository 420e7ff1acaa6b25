#!/usr/bin/env python3
"""PyTorch's numbers for the rows of `cargo bench -p onekernel-ops --bench ops2`.

Sort (torch.sort of f32, which also returns the indices; and of int32
keys), the row normalisations (softmax, log_softmax, layer_norm, rms_norm)
at widths 128, 1000, 4096, 32768 over 2^24 numbers in f32 and f16,
random numbers (torch.randint over u32's range as int64 is not the same
work, so rand and randn only, and torch.randint of int32), and matmul
(f32 with TF32 off, f16 with f32 accumulation).

Timing: CUDA events around `iters` back-to-back calls, divided by `iters`;
3 warm-up calls first, then the median of 5 such batches. Without CUDA
it runs on the CPU with small sizes (to check that it works).

usage: python3 peers/torch/ops2_baseline.py [--quick] [--only sort,norm,random,matmul,floor]
"""

import argparse
import statistics
import time

import torch


def timer(dev):
    def time_it(fn, iters):
        for _ in range(3):
            fn()
        if dev == "cuda":
            torch.cuda.synchronize()
        samples = []
        for _ in range(5):
            if dev == "cuda":
                start = torch.cuda.Event(enable_timing=True)
                end = torch.cuda.Event(enable_timing=True)
                start.record()
                for _ in range(iters):
                    fn()
                end.record()
                torch.cuda.synchronize()
                samples.append(start.elapsed_time(end) / 1e3 / iters)
            else:
                t0 = time.perf_counter()
                for _ in range(iters):
                    fn()
                samples.append((time.perf_counter() - t0) / iters)
        return statistics.median(samples)
    return time_it


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--quick", action="store_true")
    p.add_argument("--only", default="sort,norm,random,matmul")
    args = p.parse_args()
    only = set(args.only.split(","))
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    quick = args.quick or dev == "cpu"
    time_it = timer(dev)
    iters = 2 if quick else 20
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    rows = []

    def row(op, shape, t, rate):
        rows.append((op, shape, t * 1e3, rate))

    if "sort" in only:
        for e in ([16] if quick else [20, 24, 26]):
            n = 1 << e
            x = torch.rand(n, device=dev) * 2 - 1
            xi = torch.randint(-2**31, 2**31 - 1, (n,), dtype=torch.int32, device=dev)
            t = time_it(lambda: torch.sort(xi), iters)
            row("torch.sort int32 (+ indices)", f"2^{e}", t, f"{n / t * 1e-9:.2f} Gkeys/s")
            t = time_it(lambda: torch.sort(x), iters)
            row("torch.sort f32 (+ indices)", f"2^{e}", t, f"{n / t * 1e-9:.2f} Gkeys/s")
            t = time_it(lambda: torch.sort(x, stable=True), iters)
            row("torch.sort f32 stable (+ indices)", f"2^{e}", t, f"{n / t * 1e-9:.2f} Gkeys/s")

    if "norm" in only:
        total = 1 << (16 if quick else 24)
        dtypes = [torch.float32, torch.float16] if dev == "cuda" else [torch.float32]
        for dt in dtypes:
            name = "f32" if dt == torch.float32 else "f16"
            for cols in [128, 1000, 4096, 32768]:
                r = max(total // cols, 1)
                x = torch.rand(r, cols, device=dev, dtype=dt) * 8 - 4
                g = torch.full((cols,), 1.5, device=dev, dtype=dt)
                b = torch.full((cols,), 0.25, device=dev, dtype=dt)
                nbytes = 2 * x.numel() * x.element_size()
                ops = [
                    ("softmax", lambda: torch.softmax(x, dim=-1)),
                    ("log_softmax", lambda: torch.log_softmax(x, dim=-1)),
                    ("layer_norm", lambda: torch.nn.functional.layer_norm(x, (cols,), g, b, 1e-5)),
                    ("rms_norm", lambda: torch.nn.functional.rms_norm(x, (cols,), g, 1e-5)),
                ]
                for op, fn in ops:
                    t = time_it(fn, iters)
                    row(f"{op} {name}", f"{r}x{cols}", t, f"{nbytes / t * 1e-9:.0f} GB/s")

    if "random" in only:
        e = 16 if quick else 26
        n = 1 << e
        out = torch.empty(n, device=dev)
        outi = torch.empty(n, device=dev, dtype=torch.int32)
        t = time_it(lambda: outi.random_(0, 2**31 - 1), iters)
        row("int32 random_", f"2^{e}", t, f"{4 * n / t * 1e-9:.0f} GB/s")
        t = time_it(lambda: torch.rand(n, device=dev, out=out), iters)
        row("torch.rand f32", f"2^{e}", t, f"{4 * n / t * 1e-9:.0f} GB/s")
        t = time_it(lambda: torch.randn(n, device=dev, out=out), iters)
        row("torch.randn f32", f"2^{e}", t, f"{4 * n / t * 1e-9:.0f} GB/s")

    if "floor" in only:
        # The memory floor: a copy of 2^24 f32 (the norms' traffic) and a
        # fill of 2^26 (the random numbers').
        e = 16 if quick else 24
        n = 1 << e
        x = torch.rand(n, device=dev)
        y = torch.empty(n, device=dev)
        t = time_it(lambda: y.copy_(x), iters)
        row("copy_ f32", f"2^{e}", t, f"{8 * n / t * 1e-9:.0f} GB/s")
        w = torch.empty(4 * n, device=dev)
        t = time_it(lambda: w.fill_(0.5), iters)
        row("fill_ f32", f"2^{e + 2}", t, f"{16 * n / t * 1e-9:.0f} GB/s")

    if "matmul" in only:
        shapes = [(1, 128, 64, 128), (1, 100, 77, 130), (2, 64, 32, 64)] if quick else \
            [(1, 4096, 4096, 4096), (1, 1000, 777, 1234), (8, 1024, 1024, 1024)]
        for batch, m, k, n in shapes:
            a = torch.rand(batch, m, k, device=dev) - 0.5
            b = torch.rand(batch, k, n, device=dev) - 0.5
            at = a.transpose(1, 2).contiguous()
            flops = 2 * batch * m * k * n
            shape = f"{batch}x{m}x{k}x{n}" if batch > 1 else f"{m}x{k}x{n}"
            t = time_it(lambda: torch.bmm(a, b), min(iters, 10))
            row("matmul f32 NN (cuBLAS, no TF32)", shape, t, f"{flops / t * 1e-12:.1f} TFLOP/s")
            t = time_it(lambda: torch.bmm(at.transpose(1, 2), b), min(iters, 10))
            row("matmul f32 TN (cuBLAS, no TF32)", shape, t, f"{flops / t * 1e-12:.1f} TFLOP/s")
            if dev == "cuda":
                a16, b16 = a.half(), b.half()
                t = time_it(lambda: torch.bmm(a16, b16).float(), min(iters, 10))
                row("matmul f16 (cuBLAS) + to f32", shape, t, f"{flops / t * 1e-12:.1f} TFLOP/s")

    name = torch.cuda.get_device_name() if dev == "cuda" else "CPU"
    print(f"PyTorch {torch.__version__} on {name}\n")
    print("| op | shape | time (ms) | rate |")
    print("|---|---|---:|---:|")
    for op, shape, ms, rate in rows:
        print(f"| {op} | {shape} | {ms:.4f} | {rate} |")


if __name__ == "__main__":
    main()
