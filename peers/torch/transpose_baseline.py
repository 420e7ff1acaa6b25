#!/usr/bin/env python3
"""PyTorch's copy_ and copy_(a.t()) at the shapes of `ops2 --only transpose` (1000x777,
8192x8192; f32, f16): CUDA events, 3 warm-up calls, median of 5 batches of 20."""
import torch

from ops_baseline import make_timer  # the timer of the other baselines (seconds a call)

time_it = make_timer("cuda")


print("| PyTorch op | shape | ms | GB/s |")
print("|---|---|---:|---:|")
for rows, cols in [(1000, 777), (8192, 8192)]:
    for dtype, size, name in [(torch.float32, 4, "f32"), (torch.float16, 2, "f16")]:
        a = torch.arange(rows * cols, device="cuda").to(dtype).view(rows, cols)
        o = torch.empty_like(a)
        ot = torch.empty(cols, rows, device="cuda", dtype=dtype)
        for _ in range(50):
            o.copy_(a)
        nbytes = 2 * rows * cols * size
        for what, fn in [("copy_", lambda: o.copy_(a)), ("copy_(a.t())", lambda: ot.copy_(a.t()))]:
            t = time_it(fn, 20) * 1e3
            print(f"| {what} {name} | {rows}x{cols} | {t:.4f} | {nbytes / t * 1e-6:.0f} |")
