#!/usr/bin/env python3
"""cuBLAS SGEMM (through PyTorch, TF32 off) at the shapes of
`cargo run --release --example sgemm_tuned -- --bench`.

Prints one Markdown table with the same columns as the example's
(m × k × n, ms, TFLOP/s), so the two tables can be set side by side.

Timing: CUDA events around `iters` back-to-back calls, divided by `iters`;
3 warm-up calls first, then the median of 7 such batches. Without CUDA the
script runs small shapes on the CPU (to check that it works, not for the
figures).

usage: python3 sgemm_shapes.py [--cpu] [--small]
"""

import argparse
import statistics
import time

import torch

SHAPES = [(512, 512, 512), (1000, 777, 1234), (2048, 2048, 2048), (4096, 4096, 4096),
          (4096, 1024, 4096), (4096, 4096, 256), (8192, 8192, 8192)]
SMALL = [(64, 64, 64), (100, 77, 123), (128, 128, 128)]


def time_it(fn, dev, iters, batches=7):
    for _ in range(3):
        fn()
    if dev == "cuda":
        torch.cuda.synchronize()
    samples = []
    for _ in range(batches):
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


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cpu", action="store_true", help="run on the CPU even if CUDA is available")
    ap.add_argument("--small", action="store_true", help="small shapes (automatic on the CPU)")
    args = ap.parse_args()
    dev = "cuda" if torch.cuda.is_available() and not args.cpu else "cpu"
    small = args.small or dev == "cpu"
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    name = torch.cuda.get_device_name() if dev == "cuda" else "CPU"
    print(f"cuBLAS SGEMM (PyTorch {torch.__version__}, TF32 off) on {name}\n")
    print("| m × k × n | ms | TFLOP/s |")
    print("|---|---:|---:|")
    for m, k, n in (SMALL if small else SHAPES):
        a = torch.randn(m, k, device=dev, dtype=torch.float32)
        b = torch.randn(k, n, device=dev, dtype=torch.float32)
        c = torch.empty(m, n, device=dev, dtype=torch.float32)
        iters = max(1, min(200, int(2e10 / (2 * m * k * n))))
        t = time_it(lambda: torch.matmul(a, b, out=c), dev, iters)
        want = a.double() @ b.double()
        if not torch.allclose(c.double(), want, rtol=1e-3, atol=1e-3 * k ** 0.5):
            raise AssertionError(f"{m}x{k}x{n}: cuBLAS result differs from float64")
        print(f"| {m} × {k} × {n} | {t * 1e3:.3f} | {2 * m * k * n / t * 1e-12:.2f} |", flush=True)


if __name__ == "__main__":
    main()
