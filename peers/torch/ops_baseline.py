#!/usr/bin/env python3
"""PyTorch's numbers for the rows of `cargo bench -p onekernel-ops --bench ops`.

Prints one Markdown table with the same columns and rows as the bench's GPU
table (reduce, scan, histogram, transpose and copy), so that the two can be
put side by side: `sum`, `max`, `sum(dim=..)`, `cumsum`, `bincount`,
`transpose(..).contiguous()` (as `out.copy_(x.t())`) and `copy_`.

Timing: CUDA events around `iters` back-to-back calls, divided by `iters`;
3 warm-up calls first, then the median of 5 batches (the bench takes the
median of 5 batches of GPU timestamps). GB/s counts the bytes read plus
written once, as the bench does. Without CUDA the script runs on the CPU at
the bench's `--small` sizes (to check that it works, not for the figures).

usage: python3 peers/torch/ops_baseline.py [--cpu] [--small]
"""

import argparse
import statistics
import time

import torch


def make_timer(dev):
    def time_it(fn, iters, batches=5):
        for _ in range(3):
            fn()
        samples = []
        for _ in range(batches):
            if dev == "cuda":
                torch.cuda.synchronize()
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


def label(n):
    return f"2^{n.bit_length() - 1}" if n & (n - 1) == 0 else str(n)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cpu", action="store_true", help="run on the CPU even if CUDA is available")
    ap.add_argument("--small", action="store_true", help="the bench's --small sizes (automatic on the CPU)")
    args = ap.parse_args()
    dev = "cuda" if torch.cuda.is_available() and not args.cpu else "cpu"
    small = args.small or dev == "cpu"
    shift = 6 if small else 0
    time_it = make_timer(dev)
    name = torch.cuda.get_device_name() if dev == "cuda" else "CPU"
    print(f"\n## PyTorch {torch.__version__} on {name}"
          f"{' (CUDA ' + torch.version.cuda + ')' if dev == 'cuda' else ''}\n")
    print("CUDA events, median of 5 batches. GB/s: bytes read + written once."
          + (" SMALL SIZES: not the reference figures." if small else "") + "\n")
    print("| op | shape | dtype | time (ms) | GB/s | note |")
    print("|---|---|---|---|---|---|")

    def row(op, shape, dtype, seconds, nbytes, note=""):
        print(f"| {op} | {shape} | {dtype} | {seconds * 1e3:.4f} | {nbytes / seconds * 1e-9:.1f} | {note} |", flush=True)

    for n in [(1 << 20) >> shift, (1 << 24) >> shift, (1 << 28) >> shift]:
        x = (torch.arange(n, device=dev) % 7).float()
        out = torch.empty((), device=dev)
        row("reduce sum", label(n), "f32", time_it(lambda: torch.sum(x, 0, out=out), 20), n * 4, "`torch.sum`")
        if n == (1 << 24) >> shift:
            row("reduce max", label(n), "f32", time_it(lambda: torch.max(x), 20), n * 4, "`torch.max`")
            h = x.half()
            row("reduce sum", label(n), "f16 (f32 acc)", time_it(lambda: torch.sum(h), 20), n * 2, "`torch.sum`")
            i = x.int()
            row("reduce sum", label(n), "i32", time_it(lambda: torch.sum(i), 20), n * 4, "`torch.sum` (i64 result)")
            cols = 4096 >> (shift // 2)
            m = x.view(-1, cols)
            row("reduce rows sum", f"{n // cols} x {cols}", "f32", time_it(lambda: m.sum(dim=1), 20), n * 4, "`sum(dim=1)`")
            row("reduce cols sum", f"{n // cols} x {cols}", "f32", time_it(lambda: m.sum(dim=0), 20), n * 4, "`sum(dim=0)`")

    for n in [1_000_003 >> shift, (1 << 24) >> shift, (1 << 26) >> shift]:
        x = (torch.arange(n, device=dev) % 5).int()
        out = torch.empty_like(x)
        row("scan inclusive sum", label(n), "i32", time_it(lambda: torch.cumsum(x, 0, out=out), 10), n * 8, "`torch.cumsum`")

    n = 10_000_000 >> shift
    for bins in [256, 65536]:
        v = ((torch.arange(n, device=dev, dtype=torch.int64) * 2654435761) % (1 << 32)) % bins
        v = v.int()
        row("histogram", f"{n} into {bins}", "u32 (int32)", time_it(lambda: torch.bincount(v, minlength=bins), 10), n * 4,
            "`torch.bincount`")

    for rows, cols in [(1000, 777), (8192 >> (shift // 2), 8192 >> (shift // 2))]:
        shape = f"{rows} x {cols}"
        for dtype, size in [(torch.float32, 4), (torch.float16, 2)]:
            a = torch.arange(rows * cols, device=dev).to(dtype).view(rows, cols)
            o = torch.empty_like(a)
            ot = torch.empty(cols, rows, device=dev, dtype=dtype)
            name = "f32" if dtype == torch.float32 else "f16"
            copy_t = time_it(lambda: o.copy_(a), 10)
            row("copy 2-D (row-major)", shape, name, copy_t, rows * cols * size * 2, "`copy_`")
            t = time_it(lambda: ot.copy_(a.t()), 10)
            row("transpose", shape, name, t, rows * cols * size * 2, f"`copy_(a.t())`, {copy_t / t:.2f}x copy's bandwidth")


if __name__ == "__main__":
    main()
