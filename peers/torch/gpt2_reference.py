#!/usr/bin/env python3
"""The GPT-2-small-shaped decoder of `examples/gpt.rs`, in plain PyTorch.

Same architecture (token + position embeddings, pre-norm blocks with
layer norm, causal self-attention with a key/value cache, a tanh-GELU MLP,
final layer norm, output projection tied to the token embedding, greedy
argmax), same weights: the generator below is `examples/gpt.rs`'s
`weight` (MurmurHash3's fmix32 over (seed, tensor, index); every value
`mean + u * 2^-exp` with `u` a signed integer, exact in f16), so the
weights are equal bit for bit. f16 tensors throughout; PyTorch accumulates
in f32 where it does (matmul with
`allow_fp16_reduced_precision_reduction = False`, layer norm, softmax
inside scaled_dot_product_attention). The Rust kernels round where these
ops round (`addmm` rounds `x @ W + b` once; GELU and the residual add round
again), so the generated tokens are the same and the logits agree to a few
f16 units.

Prints the generated tokens, the prefill's last-row logits (checksum and
first values), and prefill and decode tokens/s of the eager model
(`--compile`: also a `torch.compile`d model, reported only, not a target).
Timing: CUDA synchronize around the prefill (median of 3, after a
warm-up), and around the whole decode loop (argmax stays on the device:
no host round trip per token). Writes nothing.

The attention backend matters for eager decode: with PyTorch's default
choice on the H200 (cuDNN attention), every decode step has a new key
length, and cuDNN builds a new graph for each (39.8 ms a token measured
2026-12-04, most of it host time). `--sdpa` pins one backend
(`torch.nn.attention.sdpa_kernel`); the default, `best`, runs the whole
measurement once per backend that works (math, flash, efficient, cudnn)
and reports each, then the best prefill and the best decode among them:
the numbers the Rust model is compared with. `--sdpa default` leaves the
choice to PyTorch. `--profile`: `torch.profiler`'s table of the kernels of
one prefill and of 16 decode steps (CUDA time, grouped by name), with the
fastest decode backend.

usage: python3 gpt2_reference.py [--size small|full] [--prefill N] [--decode M] [--seed S]
                                 [--sdpa best|default|math|flash|efficient|cudnn] [--profile] [--compile]
                                 [--save-logits FILE]
       defaults: full: prefill 1024, decode 128; small: prefill 24, decode 16 (as the Rust example)
"""

import argparse
import contextlib
import statistics
import time

import torch
import torch.nn.functional as F

CONFIGS = {  # layers, heads, width, vocab, context
    "small": (2, 2, 64, 512, 128),
    "full": (12, 12, 768, 50257, 1024),
}
# Kinds: (bits, exp, mean), as examples/gpt.rs.
MATRIX = (11, 15, 0.0)
TOKEN = (11, 18, 0.0)
POSITION = (11, 16, 0.0)
BIAS = (11, 17, 0.0)
GAIN = (7, 10, 1.0)
M32 = 0xFFFFFFFF
EPS = 1e-5


def fmix32_int(h):
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & M32
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & M32
    h ^= h >> 16
    return h


def mul32(h, c):
    """(h * c) mod 2^32 for an int64 tensor h < 2^32, without overflow."""
    lo, hi = h & 0xFFFF, h >> 16
    return (lo * c + (((hi * c) & 0xFFFF) << 16)) & M32


def fmix32(h):
    h = h ^ (h >> 16)
    h = mul32(h, 0x85EBCA6B)
    h = h ^ (h >> 13)
    h = mul32(h, 0xC2B2AE35)
    return h ^ (h >> 16)


def generate(seed, tensor, n, kind, device):
    bits, exp, mean = kind
    salt = fmix32_int(((seed * 0x9E3779B1) & M32) ^ (((tensor + 1) * 0x85EBCA77) & M32))
    h = fmix32(torch.arange(n, dtype=torch.int64, device=device) ^ salt)
    u = (h >> (32 - bits)) - (1 << (bits - 1))
    return (mean + u.to(torch.float64) * 2.0**-exp).to(torch.float16)  # exact


def weights(cfg, seed, device):
    layers, heads, w, vocab, context = cfg
    spec = [((vocab, w), TOKEN), ((context, w), POSITION)]
    for _ in range(layers):
        spec += [
            ((w,), GAIN), ((w,), BIAS),
            ((w, 3 * w), MATRIX), ((3 * w,), BIAS),
            ((w, w), MATRIX), ((w,), BIAS),
            ((w,), GAIN), ((w,), BIAS),
            ((w, 4 * w), MATRIX), ((4 * w,), BIAS),
            ((4 * w, w), MATRIX), ((w,), BIAS),
        ]
    spec += [((w,), GAIN), ((w,), BIAS)]
    out = []
    for i, (shape, kind) in enumerate(spec):
        n = 1
        for s in shape:
            n *= s
        out.append(generate(seed, i, n, kind, device).view(shape))
    return out


class Model:
    def __init__(self, cfg, ws, capacity, device):
        self.layers, self.heads, self.w, self.vocab, self.context = cfg
        self.dim = self.w // self.heads
        self.wte, self.wpe = ws[0], ws[1]
        self.blocks = [ws[2 + 12 * l: 14 + 12 * l] for l in range(self.layers)]
        self.ln_f = ws[-2:]
        self.capacity = capacity
        shape = (self.layers, 1, self.heads, capacity, self.dim)
        self.k = torch.zeros(shape, dtype=torch.float16, device=device)
        self.v = torch.zeros(shape, dtype=torch.float16, device=device)
        self.device = device

    def forward(self, tokens, first):
        """Logits (f16) of the last row of `tokens` at positions first..;
        keys and values into the caches."""
        s, w, H, d = tokens.shape[0], self.w, self.heads, self.dim
        pos = torch.arange(first, first + s, device=self.device) % self.context
        x = self.wte[tokens] + self.wpe[pos]
        for l, (g1, b1, wq, bq, wp, bp, g2, b2, wf, bf, wo, bo) in enumerate(self.blocks):
            h = F.layer_norm(x, (w,), g1, b1, EPS)
            qkv = torch.addmm(bq, h, wq)
            q, k, v = (qkv[:, i * w:(i + 1) * w].view(s, H, d).transpose(0, 1) for i in range(3))
            self.k[l, 0, :, first:first + s] = k
            self.v[l, 0, :, first:first + s] = v
            kc, vc = self.k[l, :, :, :first + s], self.v[l, :, :, :first + s]
            a = F.scaled_dot_product_attention(q[None], kc, vc, is_causal=s > 1)
            a = a[0].transpose(0, 1).reshape(s, w)
            x = x + torch.addmm(bp, a, wp)
            h = F.layer_norm(x, (w,), g2, b2, EPS)
            m = F.gelu(torch.addmm(bf, h, wf), approximate="tanh")
            x = x + torch.addmm(bo, m, wo)
        h = F.layer_norm(x[-1:], (w,), *self.ln_f, EPS)
        return (h @ self.wte.t())[0]

    def generate(self, prompt, count):
        logits = self.forward(prompt, 0)
        tok = torch.argmax(logits).view(1)
        out = [tok]
        n = prompt.shape[0]
        for i in range(1, count):
            tok = torch.argmax(self.forward(tok, n + i - 1)).view(1)
            out.append(tok)
        return torch.cat(out), logits


def sync(device):
    if device.type == "cuda":
        torch.cuda.synchronize()


BACKENDS = ["math", "flash", "efficient", "cudnn"]


def sdpa_context(name):
    """A context that pins scaled_dot_product_attention to backend `name`
    (`default`: PyTorch's own choice)."""
    if name == "default":
        return contextlib.nullcontext()
    from torch.nn.attention import SDPBackend, sdpa_kernel
    backend = {
        "math": SDPBackend.MATH,
        "flash": SDPBackend.FLASH_ATTENTION,
        "efficient": SDPBackend.EFFICIENT_ATTENTION,
        "cudnn": SDPBackend.CUDNN_ATTENTION,
    }[name]
    return sdpa_kernel([backend])


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--size", choices=["small", "full"], default="full")
    p.add_argument("--prefill", type=int)
    p.add_argument("--decode", type=int)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--sdpa", choices=["best", "default"] + BACKENDS, default="best",
                   help="attention backend (best: each that works, then the fastest)")
    p.add_argument("--profile", action="store_true", help="torch.profiler tables of a prefill and 16 decode steps")
    p.add_argument("--compile", action="store_true", help="also time a torch.compile'd model (reported only)")
    p.add_argument("--print-weights", action="store_true", help="print the first values of each tensor")
    p.add_argument("--save-logits", metavar="FILE",
                   help="write the prefill's last-row logits (f32, little-endian) as `gpt --save-logits` does")
    a = p.parse_args()
    full = a.size == "full"
    prefill = a.prefill or (1024 if full else 24)
    decode = a.decode or (128 if full else 16)
    cfg = CONFIGS[a.size]
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = False
    torch.set_grad_enabled(False)

    t = time.perf_counter()
    ws = weights(cfg, a.seed, device)
    sync(device)
    params = sum(x.numel() for x in ws)
    print(f"{a.size} {cfg}: {params} parameters, generated in {time.perf_counter() - t:.2f} s (seed {a.seed}) on {device}"
          f" ({torch.cuda.get_device_name() if device.type == 'cuda' else 'CPU'}), PyTorch {torch.__version__}")
    if a.print_weights:
        for i, x in enumerate(ws):
            print(i, x.flatten()[:4].tolist())
    vocab = cfg[3]
    prompt = torch.tensor([(i * 7919 + 13) % vocab for i in range(prefill)], device=device)
    model = Model(cfg, ws, prefill + decode, device)
    steps = max(decode - 1, 1)

    def run(m):
        m.generate(prompt, 3)  # warm-up (a prefill and decode steps)
        times = []
        for _ in range(3):
            sync(device)
            t = time.perf_counter()
            logits = m.forward(prompt, 0)
            tok = torch.argmax(logits).view(1)
            sync(device)
            times.append(time.perf_counter() - t)
        prefill_s = statistics.median(times)
        out = [tok]
        sync(device)
        t = time.perf_counter()
        for i in range(1, decode):
            tok = torch.argmax(m.forward(tok, prefill + i - 1)).view(1)
            out.append(tok)
        tokens = torch.cat(out).tolist()
        decode_s = time.perf_counter() - t
        return tokens, logits.float(), prefill_s, decode_s

    def line(label, prefill_s, decode_s):
        return (f"{label}: prefill {prefill} tokens: {prefill_s * 1e3:.3f} ms ({prefill / prefill_s:.0f} tokens/s); "
                f"decode {decode - 1} tokens: {decode_s * 1e3 / steps:.3f} ms a token ({(decode - 1) / decode_s:.1f} tokens/s)")

    names = BACKENDS if a.sdpa == "best" else [a.sdpa]
    results = {}
    for name in names:
        try:
            with sdpa_context(name):
                results[name] = run(model)
        except Exception as e:  # a backend without a kernel for these shapes (or on this device)
            print(f"sdpa={name}: not run: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}")
    if not results:
        raise SystemExit("no attention backend ran")
    first = next(iter(results.values()))
    tokens, logits = first[0], first[1]
    print(f"generated tokens: {tokens}")
    print(f"prefill logits (last row): checksum {logits.double().sum().item():.6f}, first {logits[:5].tolist()}")
    if a.save_logits:
        with open(a.save_logits, "wb") as f:
            f.write(logits.float().cpu().numpy().astype("<f4").tobytes())
    for name, (btokens, blogits, prefill_s, decode_s) in results.items():
        same = "tokens equal" if btokens == tokens else \
            f"tokens differ at {sum(x != y for x, y in zip(btokens, tokens))} of {len(tokens)}"
        diff = (blogits - logits).abs().max().item()
        print(line(f"eager f16 [sdpa={name}]", prefill_s, decode_s) + f"; {same}, logits max diff {diff:.2e}")
    best_prefill = min(results, key=lambda n: results[n][2])
    best_decode = min(results, key=lambda n: results[n][3])
    bp, bd = results[best_prefill][2], results[best_decode][3]
    print(f"best eager f16: prefill {prefill} tokens: {bp * 1e3:.3f} ms ({prefill / bp:.0f} tokens/s) [sdpa={best_prefill}]; "
          f"decode {decode - 1} tokens: {bd * 1e3 / steps:.3f} ms a token ({(decode - 1) / bd:.1f} tokens/s) [sdpa={best_decode}]")

    if a.profile:
        from torch.profiler import ProfilerActivity, profile
        activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device.type == "cuda" else [])
        sort = "cuda_time_total" if device.type == "cuda" else "cpu_time_total"
        with sdpa_context(best_decode):
            with profile(activities=activities) as prof:
                model.forward(prompt, 0)
                sync(device)
            print(f"\nprofile of the prefill ({prefill} tokens, sdpa={best_decode}):")
            print(prof.key_averages().table(sort_by=sort, row_limit=15))
            tok = torch.argmax(model.forward(prompt, 0)).view(1)
            n = min(16, decode - 1)
            with profile(activities=activities) as prof:
                for i in range(n):
                    tok = torch.argmax(model.forward(tok, prefill + i)).view(1)
                sync(device)
            print(f"profile of {n} decode steps (sdpa={best_decode}):")
            print(prof.key_averages().table(sort_by=sort, row_limit=15))

    if a.compile:
        try:
            with sdpa_context(best_decode):
                compiled = Model(cfg, ws, prefill + decode, device)
                compiled.forward = torch.compile(compiled.forward, dynamic=True)
                t = time.perf_counter()
                compiled.generate(prompt, 3)
                print(f"torch.compile: compiled in {time.perf_counter() - t:.1f} s")
                ctokens, _, cp, cd = run(compiled)
            print(line(f"torch.compile f16 [sdpa={best_decode}] (reported, not a target)", cp, cd)
                  + f"; tokens {'equal eager' if ctokens == tokens else 'DIFFER from eager'}")
        except Exception as e:  # reported, not a target
            print(f"torch.compile failed: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}")


if __name__ == "__main__":
    main()
