#!/usr/bin/python3
"""minilm_torch.py: PyTorch's side of bench_minilm, the same shapes on the same machine.

A BERT of all-MiniLM-L6-v2's shape (6 layers, hidden 384, 12 heads,
intermediate 1536, vocabulary 30,522) with random weights, written the way
Hugging Face's BertModel computes it in eager mode (separate query/key/value
projections, matmul + softmax attention with an additive mask, erf GELU,
post-LayerNorm), then mean pooling and L2 normalisation as
sentence-transformers does. float32, inference mode, no autograd.

    /usr/bin/python3 bench/minilm_torch.py [--threads 2] [--seconds 1.0] [--configs 16x1,32x8,...]

Prints one JSON object per line: {"tokens", "batch", "threads", "seconds_per_batch",
"sentences_per_s"}; the fastest of repeated runs after a warm-up (on a
shared machine other work only slows a run down). tokens
"mixed" is a batch of lengths spread evenly from 16 to 128, padded to the
longest with an attention mask, as a real batch of sentences is. bench_minilm
runs it after its own measurements and prints both side by side.
"""
import argparse
import json
import math
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

H, LAYERS, HEADS, INTER, VOCAB, POSITIONS = 384, 6, 12, 1536, 30522, 512


class Layer(nn.Module):
    def __init__(self):
        super().__init__()
        self.query, self.key, self.value = nn.Linear(H, H), nn.Linear(H, H), nn.Linear(H, H)
        self.attn_out, self.ln1 = nn.Linear(H, H), nn.LayerNorm(H, eps=1e-12)
        self.inter, self.out, self.ln2 = nn.Linear(H, INTER), nn.Linear(INTER, H), nn.LayerNorm(H, eps=1e-12)

    def forward(self, x, additive_mask):
        b, l, _ = x.shape
        d = H // HEADS

        def split(t):
            return t.view(b, l, HEADS, d).permute(0, 2, 1, 3)

        q, k, v = split(self.query(x)), split(self.key(x)), split(self.value(x))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(d) + additive_mask
        ctx = torch.matmul(torch.softmax(scores, dim=-1), v).permute(0, 2, 1, 3).reshape(b, l, H)
        x = self.ln1(x + self.attn_out(ctx))
        return self.ln2(x + self.out(F.gelu(self.inter(x))))


class MiniLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.word, self.pos, self.token_type = nn.Embedding(VOCAB, H), nn.Embedding(POSITIONS, H), nn.Embedding(2, H)
        self.ln = nn.LayerNorm(H, eps=1e-12)
        self.layers = nn.ModuleList(Layer() for _ in range(LAYERS))

    def forward(self, ids, mask):
        l = ids.shape[1]
        x = self.ln(self.word(ids) + self.pos(torch.arange(l))[None] + self.token_type(torch.zeros_like(ids)))
        additive = (1.0 - mask[:, None, None, :].to(x.dtype)) * torch.finfo(x.dtype).min
        for layer in self.layers:
            x = layer(x, additive)
        m = mask[..., None].to(x.dtype)
        pooled = (x * m).sum(1) / m.sum(1).clamp(min=1e-9)
        return F.normalize(pooled, p=2, dim=1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--seconds", type=float, default=1.0)
    ap.add_argument("--configs", default="16x1,16x8,16x32,32x1,32x8,32x32,128x1,128x8,128x32",
                    help="TOKENSxBATCH,...")
    args = ap.parse_args()
    torch.manual_seed(0)
    torch.set_num_threads(args.threads)
    model = MiniLM().eval()
    for cfg in args.configs.split(","):
        # "TxB": B sequences of T tokens; "mixedxB": B sequences of 16 to 128
        # tokens (16 + 112 * i / (B - 1)), padded to the longest with a mask.
        tokens, batch = cfg.rsplit("x", 1)
        batch = int(batch)
        if tokens == "mixed":
            lens = [16 + (112 * i) // max(batch - 1, 1) for i in range(batch)]
        else:
            lens = [int(tokens)] * batch
        ids = torch.randint(1000, VOCAB, (batch, max(lens)))
        mask = torch.zeros(batch, max(lens), dtype=torch.long)
        for i, n in enumerate(lens):
            ids[i, 0], ids[i, n - 1], mask[i, :n] = 101, 102, 1
            ids[i, n:] = 0
        times = []
        with torch.inference_mode():
            model(ids, mask)  # warm-up
            start = time.perf_counter()
            while len(times) < 3 or (time.perf_counter() - start < args.seconds and len(times) < 200):
                t0 = time.perf_counter()
                model(ids, mask)
                times.append(time.perf_counter() - t0)
        per_batch = min(times)  # the fastest run, as bench_minilm times its own
        print(json.dumps({"tokens": tokens if tokens == "mixed" else int(tokens), "batch": batch,
                          "threads": args.threads,
                          "seconds_per_batch": per_batch, "sentences_per_s": batch / per_batch}),
              flush=True)


if __name__ == "__main__":
    main()
