#!/usr/bin/env python3
"""PyTorch's fused attention at the shapes `examples/attention.rs --bench` times.

`torch.nn.functional.scaled_dot_product_attention` on f16 tensors of shape
[batch, heads, seq, dim], causal and not, in TFLOP/s counted as flash
attention counts them (4 * batch * heads * seq^2 * dim, halved with the
causal mask), the same count as the Rust benchmark. Prints one Markdown
table; also which backend PyTorch picked (flash, efficient, math).

Timing: CUDA events around `iters` back-to-back calls, divided by
`iters`, after 3 warm-up calls; the median of 7 such batches (as
peers/torch/reference.py). Without CUDA it runs small shapes on the CPU
with time.perf_counter, to check that the script works, not for figures.

usage: python3 attention_baseline.py [--small]
"""

import argparse
import statistics
import time

import torch
import torch.nn.functional as F

SHAPES = [  # (batch, heads, seq, dim, causal)
    (4, 16, 4096, 128, False),
    (4, 16, 4096, 128, True),
    (4, 16, 4096, 64, False),
    (4, 16, 4096, 64, True),
    (1, 32, 8192, 128, False),
    (1, 32, 8192, 128, True),
]
SMALL = [(1, 2, 256, 64, False), (1, 2, 200, 128, True)]


def time_it(fn, iters, cuda, batches=7):
    for _ in range(3):
        fn()
    if cuda:
        torch.cuda.synchronize()
    samples = []
    for _ in range(batches):
        if cuda:
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


def backend(q, k, v, causal):
    """The first SDPA backend that accepts these inputs, in PyTorch's order."""
    try:
        from torch.nn.attention import SDPBackend, sdpa_kernel
    except ImportError:
        return "?"
    for b in (SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION, SDPBackend.MATH):
        try:
            with sdpa_kernel(b):
                F.scaled_dot_product_attention(q, k, v, is_causal=causal)
            return b.name.lower()
        except RuntimeError:
            continue
    return "?"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--small", action="store_true")
    args = parser.parse_args()
    cuda = torch.cuda.is_available()
    dev = "cuda" if cuda else "cpu"
    dtype = torch.float16 if cuda else torch.float32
    shapes = SMALL if args.small or not cuda else SHAPES
    name = torch.cuda.get_device_name() if cuda else "CPU"
    print(f"PyTorch {torch.__version__} on {name}\n")
    print("| shape | causal | ms | TFLOP/s | backend |")
    print("| --- | --- | --- | --- | --- |")
    gen = torch.Generator(device=dev).manual_seed(0)
    for (b, h, s, d, causal) in shapes:
        q, k, v = (torch.randn(b, h, s, d, device=dev, dtype=dtype, generator=gen) for _ in range(3))
        fn = lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal)
        t = time_it(fn, 10 if cuda else 2, cuda)
        flops = 4 * b * h * s * s * d / (2 if causal else 1)
        print(f"| B{b} H{h} S{s} D{d} | {'yes' if causal else 'no'} | {t * 1e3:.3f} | "
              f"{flops / t * 1e-12:.1f} | {backend(q, k, v, causal)} |")
        del q, k, v
    # Decode (GPT-2 small's shape: one new query over a 1,024-key cache),
    # the shape `examples/attention.rs --bench` times for the decode kernel.
    # With is_causal=False: PyTorch's causal mask is the top-left one, which
    # would let the one query see key 0 only.
    for (b, h, skv, d) in [(1, 12, 1024, 64)]:
        q = torch.randn(b, h, 1, d, device=dev, dtype=dtype, generator=gen)
        k, v = (torch.randn(b, h, skv, d, device=dev, dtype=dtype, generator=gen) for _ in range(2))
        fn = lambda: F.scaled_dot_product_attention(q, k, v)
        t = time_it(fn, 50 if cuda else 2, cuda)
        print(f"\ndecode B{b} H{h} q1 kv{skv} D{d}: {t * 1e6:.1f} us per call ({backend(q, k, v, False)})")


if __name__ == "__main__":
    main()
