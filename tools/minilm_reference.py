#!/usr/bin/python3
"""minilm_reference.py: the independent reference for remem's minilm embedder.

It builds a small BERT of MiniLM's architecture with random weights and the
real 30,522-token vocabulary, saves it as a model folder remem can load, and
writes the token ids and sentence embeddings it computes for a fixed set of
texts, so that the C code (src/embed/) can be checked against it:

    /usr/bin/python3 tools/minilm_reference.py            # regenerate the fixture

(Debian's python3-torch lives in /usr/bin/python3.) Output, in
tests/data/minilm/: model/ (config.json, vocab.txt, model.safetensors,
remem-model.json) and expected.json.

Nothing here shares code or structure with the C implementation: the
tokenizer is written from the description of BERT's uncased tokenizer as
Hugging Face's tokenizers library applies it (the one sentence-transformers
runs), using Python's unicodedata; the encoder is plain PyTorch on a padded
batch with an attention mask, in float64, where the C code packs sequences
without padding and computes in float32. The weights are stored in three
dtypes (word embeddings F16, position embeddings BF16, the rest F32) and the
reference computes with the rounded values, so every reader path is checked.
"""
import argparse
import json
import math
import os
import struct
import unicodedata

import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
DEFAULT_VOCAB = "/work/shared/models/all-MiniLM-L6-v2/vocab.txt"

CONFIG = {
    "architectures": ["BertModel"],
    "model_type": "bert",
    "hidden_act": "gelu",
    "hidden_size": 64,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "intermediate_size": 128,
    "max_position_embeddings": 512,
    "type_vocab_size": 2,
    "layer_norm_eps": 1e-12,
    "position_embedding_type": "absolute",
    "vocab_size": 30522,
    "pad_token_id": 0,
}
MAX_TOKENS = 256  # sentence-transformers' max_seq_length for all-MiniLM-L6-v2
MAX_WORD_CHARS = 100
SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


# --------------------------------------------------------------------------
# Tokenizer
# --------------------------------------------------------------------------
def load_vocab(path):
    """token -> id (its line number); a token seen twice keeps its last line."""
    with open(path, "rb") as f:
        lines = f.read().decode("utf-8").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return {line.rstrip(): i for i, line in enumerate(lines)}


def is_control(ch):
    # Cc, Cf, Co, Cs; unassigned code points (Cn) are kept, as the reference
    # library keeps them (its tables, built from UnicodeData.txt, have no Cn).
    if ch in "\t\n\r":
        return False
    return unicodedata.category(ch) in ("Cc", "Cf", "Co", "Cs")


def is_whitespace(ch):
    return ch in " \t\n\r" or unicodedata.category(ch) in ("Zs", "Zl", "Zp")


def is_punctuation(ch):
    cp = ord(ch)
    if 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126:
        return True
    return unicodedata.category(ch).startswith("P")


def is_cjk(cp):
    # The reference library's list: its fifth range starts at U+2B920 (the
    # original BERT's at U+2B820), so U+2B820..U+2B91F are not split.
    return any(lo <= cp <= hi for lo, hi in (
        (0x4E00, 0x9FFF), (0x3400, 0x4DBF), (0x20000, 0x2A6DF), (0x2A700, 0x2B73F),
        (0x2B740, 0x2B81F), (0x2B920, 0x2CEAF), (0xF900, 0xFAFF), (0x2F800, 0x2FA1F)))


def normalize(text):
    kept = []
    for ch in text:
        if ord(ch) in (0, 0xFFFD) or is_control(ch):
            continue
        if is_whitespace(ch):
            kept.append(" ")
        elif is_cjk(ord(ch)):
            kept.append(" " + ch + " ")
        else:
            kept.append(ch)
    decomposed = unicodedata.normalize("NFD", "".join(kept))
    stripped = "".join(c for c in decomposed if unicodedata.category(c) != "Mn")
    # Lowercase character by character (no context, no final sigma).
    return "".join(c.lower() for c in stripped)


def pre_tokenize(text):
    words = []
    for chunk in text.split(" "):
        word = ""
        for ch in chunk:
            if is_punctuation(ch):
                if word:
                    words.append(word)
                words.append(ch)
                word = ""
            else:
                word += ch
        if word:
            words.append(word)
    return words


def wordpiece(word, vocab):
    if len(word) > MAX_WORD_CHARS:
        return [vocab["[UNK]"]]
    pieces, start = [], 0
    while start < len(word):
        end, found = len(word), None
        while end > start:
            sub = ("##" if start else "") + word[start:end]
            if sub in vocab:
                found = vocab[sub]
                break
            end -= 1
        if found is None:
            return [vocab["[UNK]"]]
        pieces.append(found)
        start = end
    return pieces


def split_specials(text):
    """Cut raw text at verbatim special tokens: [("text", str) | ("special", str)]."""
    parts, i, plain = [], 0, ""
    while i < len(text):
        hit = next((s for s in SPECIALS if text.startswith(s, i)), None)
        if hit:
            parts.append(("text", plain))
            parts.append(("special", hit))
            plain, i = "", i + len(hit)
        else:
            plain += text[i]
            i += 1
    parts.append(("text", plain))
    return parts


def tokenize(raw_bytes, vocab):
    text = raw_bytes.decode("utf-8", errors="replace")
    ids = []
    for kind, part in split_specials(text):
        if kind == "special":
            ids.append(vocab[part])
            continue
        for word in pre_tokenize(normalize(part)):
            ids.extend(wordpiece(word, vocab))
    return [vocab["[CLS]"]] + ids[:MAX_TOKENS - 2] + [vocab["[SEP]"]]


# --------------------------------------------------------------------------
# Weights
# --------------------------------------------------------------------------
def make_weights(seed):
    """name -> (dtype, float64 tensor already rounded to that dtype)."""
    g = torch.Generator().manual_seed(seed)
    H, I, V = CONFIG["hidden_size"], CONFIG["intermediate_size"], CONFIG["vocab_size"]
    P, TV = CONFIG["max_position_embeddings"], CONFIG["type_vocab_size"]

    def normal(*shape, std=1.0, mean=0.0):
        return torch.randn(*shape, generator=g, dtype=torch.float64) * std + mean

    def rounded(t, dtype):
        torch_dtype = {"F32": torch.float32, "F16": torch.float16, "BF16": torch.bfloat16}[dtype]
        return dtype, t.to(torch_dtype).to(torch.float64)

    w = {}
    w["embeddings.word_embeddings.weight"] = rounded(normal(V, H, std=0.5), "F16")
    w["embeddings.position_embeddings.weight"] = rounded(normal(P, H, std=0.3), "BF16")
    w["embeddings.token_type_embeddings.weight"] = rounded(normal(TV, H, std=0.3), "F32")
    w["embeddings.LayerNorm.weight"] = rounded(normal(H, std=0.1, mean=1.0), "F32")
    w["embeddings.LayerNorm.bias"] = rounded(normal(H, std=0.1), "F32")
    for layer in range(CONFIG["num_hidden_layers"]):
        p = "encoder.layer.%d." % layer
        for name, out_dim, in_dim in (
                ("attention.self.query", H, H), ("attention.self.key", H, H),
                ("attention.self.value", H, H), ("attention.output.dense", H, H),
                ("intermediate.dense", I, H), ("output.dense", H, I)):
            # Scaled so that attention logits are of order 1: non-uniform
            # attention, so that a mistake in masking or head layout shows.
            w[p + name + ".weight"] = rounded(normal(out_dim, in_dim, std=1.5 / math.sqrt(in_dim)), "F32")
            w[p + name + ".bias"] = rounded(normal(out_dim, std=0.1), "F32")
        for ln in ("attention.output.LayerNorm", "output.LayerNorm"):
            w[p + ln + ".weight"] = rounded(normal(H, std=0.1, mean=1.0), "F32")
            w[p + ln + ".bias"] = rounded(normal(H, std=0.1), "F32")
    # Present in the real checkpoint, unused by a mean-pooling encoder.
    w["pooler.dense.weight"] = rounded(normal(H, H, std=0.1), "F32")
    w["pooler.dense.bias"] = rounded(normal(H, std=0.1), "F32")
    return w


def save_safetensors(path, weights):
    """Write the safetensors format: u64 LE header length, JSON header, data."""
    header, blobs, offset = {"__metadata__": {"format": "pt"}}, [], 0
    items = list(weights.items())
    items.append(("embeddings.position_ids", ("I64", torch.arange(CONFIG["max_position_embeddings"]).reshape(1, -1))))
    for name, (dtype, t) in items:
        if dtype == "F32":
            data = t.to(torch.float32).numpy().astype("<f4").tobytes()
        elif dtype == "F16":
            data = t.to(torch.float16).numpy().astype("<f2").tobytes()
        elif dtype == "BF16":
            data = t.to(torch.bfloat16).view(torch.int16).numpy().astype("<i2").tobytes()
        else:
            data = t.to(torch.int64).numpy().astype("<i8").tobytes()
        header[name] = {"dtype": dtype, "shape": list(t.shape), "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for b in blobs:
            f.write(b)


# --------------------------------------------------------------------------
# Encoder: a padded batch with an attention mask, float64
# --------------------------------------------------------------------------
def encode(weights, batch_ids):
    w = {k: t for k, (_, t) in weights.items()}
    H, heads = CONFIG["hidden_size"], CONFIG["num_attention_heads"]
    d, eps = H // heads, CONFIG["layer_norm_eps"]
    B, L = len(batch_ids), max(len(x) for x in batch_ids)
    ids = torch.zeros(B, L, dtype=torch.long)
    mask = torch.zeros(B, L, dtype=torch.float64)
    for i, seq in enumerate(batch_ids):
        ids[i, :len(seq)] = torch.tensor(seq)
        mask[i, :len(seq)] = 1
    x = (w["embeddings.word_embeddings.weight"][ids]
         + w["embeddings.position_embeddings.weight"][torch.arange(L)][None]
         + w["embeddings.token_type_embeddings.weight"][0])
    x = F.layer_norm(x, (H,), w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"], eps)
    blocked = (mask == 0)[:, None, None, :]
    for layer in range(CONFIG["num_hidden_layers"]):
        p = "encoder.layer.%d." % layer

        def lin(name, inp):
            return F.linear(inp, w[p + name + ".weight"], w[p + name + ".bias"])

        def heads_of(t):
            return t.view(B, L, heads, d).transpose(1, 2)

        q, k, v = (heads_of(lin("attention.self." + n, x)) for n in ("query", "key", "value"))
        scores = (q @ k.transpose(-1, -2)) / math.sqrt(d)
        probs = torch.softmax(scores.masked_fill(blocked, float("-inf")), dim=-1)
        ctx = (probs @ v).transpose(1, 2).reshape(B, L, H)
        x = F.layer_norm(x + lin("attention.output.dense", ctx), (H,),
                         w[p + "attention.output.LayerNorm.weight"], w[p + "attention.output.LayerNorm.bias"], eps)
        inner = F.gelu(lin("intermediate.dense", x))  # the erf form
        x = F.layer_norm(x + lin("output.dense", inner), (H,),
                         w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"], eps)
    pooled = (x * mask[..., None]).sum(1) / mask.sum(1, keepdim=True).clamp(min=1e-9)
    return pooled, F.normalize(pooled, p=2, dim=1, eps=1e-12)


# --------------------------------------------------------------------------
# The texts
# --------------------------------------------------------------------------
def cases():
    c = [
        ("plain", "Hello, World!"),
        ("question", "What is Deep Learning?"),
        ("empty", ""),
        ("whitespace only", "   \t\n  \r\n "),
        ("accents", "Café crème brûlée à la façade, naïve coöperation"),
        ("uppercase accents", "ÀÉÎÕÜ ÇÑ ØÅÆ ß Ångström"),
        ("decomposed accent", "e\u0301te\u0301 vs \u00e9t\u00e9"),
        ("japanese", "東京タワーは日本の電波塔です。"),
        ("chinese", "我爱自然语言处理，你呢？"),
        ("korean", "안녕하세요 세계"),
        ("emoji", "Emoji: 😀🎉👍🏽 and ❤️ hearts 🇫🇷"),
        ("punctuation runs", "!!!???...---*** ((nested)) \"quoted\" 'single' «guillemets» —dash—"),
        ("numbers", "Numbers: 3.14159, 1,000,000 and 2023-05-08T13:56:00Z; 42nd 7th 1e-12"),
        ("long words", "supercalifragilisticexpialidocious antidisestablishmentarianism pneumonoultramicroscopicsilicovolcanoconiosis"),
        ("word of 101 chars", "a" * 101 + " and " + "b" * 100 + " end"),
        ("greek", "Ελληνικά: ΟΔΟΣ Σίσυφος ἀρετή"),
        ("cyrillic", "Русский текст: Привет, мир! Ёлка"),
        ("arabic", "مرحبا بالعالم، كيف حالك؟"),
        ("hebrew with points", "שָׁלוֹם עוֹלָם"),
        ("devanagari", "हिन्दी भाषा में स्वागत है"),
        ("thai", "ภาษาไทยง่ายนิดเดียว"),
        ("control characters", "tab\there\x00nul\x07bell\u200bzero\u00adsoft\u200ejoin\x1bescape"),
        ("fullwidth and ligatures", "ＦＵＬＬＷＩＤＴＨ ｔｅｘｔ ﬁne ﬀ"),
        ("turkish", "İstanbul ıi IŞIK"),
        ("web", "email me@example.com at https://remem.dev/path?q=1&r=2#frag"),
        ("code", "C++ & C# <html> {json: [1,2]} $100 ^_^ ~tilde `code` |pipe| a=b+c*d/e%f"),
        ("separators", "line\u2028sep\u2029para\u00a0nbsp\u3000ideographic\u2003em"),
        ("math", "∑ ∫ √ ≈ ≠ ∞ ± × ÷ ∂x/∂y"),
        ("cjk extensions", "﨑 compatibility and 𠀋 extension B"),
        ("cjk extension e edge", "a\U0002B820b \U0002B91Fc \U0002B920d \U0002CEAFe"),
        ("specials in text", "a[SEP]b [MASK] [cls] [UNK]x [CLS]"),
        ("wordpiece splits", "unaffable running jumped tokenization remem"),
        ("single letter", "a"),
        ("mixed case", "MiXeD CaSe WORDS and CamelCaseIdentifiers"),
        ("over 256 tokens", " ".join(["the quick brown fox jumps over the lazy dog"] * 40)),
        ("over 256 with long pieces",
         " ".join("tokenization%d unbelievably %s" % (i, "x" * (i % 7 + 1)) for i in range(120))),
    ]
    out = [(name, text.encode("utf-8")) for name, text in c]
    out.append(("invalid utf-8", b"caf\xc3 \xff\xfe valid \xe2\x82 end \xed\xa0\x80 x \xc0\x80y \xf4\x90\x80\x80z"))
    out.append(("truncated sequence at end", b"tail \xe6\x97"))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--vocab", default=DEFAULT_VOCAB, help="the real vocab.txt (30,522 tokens)")
    ap.add_argument("--out", default=os.path.join(ROOT, "tests", "data", "minilm"))
    ap.add_argument("--seed", type=int, default=20240521)
    args = ap.parse_args()

    model_dir = os.path.join(args.out, "model")
    os.makedirs(model_dir, exist_ok=True)
    with open(args.vocab, "rb") as f:
        vocab_bytes = f.read()
    with open(os.path.join(model_dir, "vocab.txt"), "wb") as f:
        f.write(vocab_bytes)
    vocab = load_vocab(args.vocab)
    assert len(vocab_bytes.decode().rstrip("\n").split("\n")) == CONFIG["vocab_size"]
    with open(os.path.join(model_dir, "config.json"), "w") as f:
        json.dump(CONFIG, f, indent=2)
        f.write("\n")
    with open(os.path.join(model_dir, "remem-model.json"), "w") as f:
        json.dump({"unverified": True, "name": "minilm-test-tiny",
                   "note": "random weights of MiniLM's architecture for remem's tests; "
                           "made by tools/minilm_reference.py"}, f, indent=2)
        f.write("\n")
    weights = make_weights(args.seed)
    save_safetensors(os.path.join(model_dir, "model.safetensors"), weights)

    texts = cases()
    ids = [tokenize(raw, vocab) for _, raw in texts]
    with torch.no_grad():
        pooled, normed = encode(weights, ids)
    result = {
        "generator": "tools/minilm_reference.py (PyTorch %s, float64, padded batch)" % torch.__version__,
        "config": CONFIG,
        "max_tokens": MAX_TOKENS,
        "cases": [{
            "name": name,
            "hex": raw.hex(),
            "ids": seq,
            "pooled": [round(float(v), 9) for v in pooled[i]],
            "embedding": [round(float(v), 9) for v in normed[i]],
        } for i, ((name, raw), seq) in enumerate(zip(texts, ids))],
    }
    with open(os.path.join(args.out, "expected.json"), "w") as f:
        # One line per case: small, and a diff shows which case moved.
        cases_json = ",\n".join(json.dumps(c, ensure_ascii=True) for c in result.pop("cases"))
        head = json.dumps(result, indent=1)
        f.write(head[:-2] + ',\n "cases": [\n' + cases_json + "\n]}\n")
    print("wrote %s: %d cases, model in %s" % (args.out, len(texts), model_dir))


if __name__ == "__main__":
    main()
