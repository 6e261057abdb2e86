#!/usr/bin/env python3
"""locomo_compose.py: realistic benchmark data for remem, made at run time
from the development half of LoCoMo in ../shared (never copied into the
repository: see its NOTICE.md).

  locomo_compose.py memories N [--ns NS] > m.jsonl
      N memories in remem's import format (one JSON object a line), each
      two consecutive dialogue turns of the dev conversations (about 24
      terms), cycling through the turns with a different pairing on each
      pass, so that 100,000 memories read like chat history with a real
      vocabulary and real word frequencies.
  locomo_compose.py questions > q.txt
      the dev half's questions, one a line (what an agent asks its memory).
  locomo_compose.py passage BYTES > p.txt
      one line of BYTES bytes: a 200-word passage of turns, repeated (the
      "1 MB query of repeated words" of issue 12).
  locomo_compose.py words BYTES W1 [W2 ...] > p.txt
      one line of BYTES bytes: the given words repeated.

The dev file is found at ../shared/bench/locomo/locomo-dev.json from the
repository root, or at $REMEM_LOCOMO.
"""
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEV = os.environ.get("REMEM_LOCOMO",
                     os.path.join(ROOT, "..", "shared", "bench", "locomo", "locomo-dev.json"))


def load():
    try:
        with open(DEV) as f:
            return json.load(f)
    except OSError as e:
        sys.exit("locomo_compose: cannot read the LoCoMo dev half (%s); set REMEM_LOCOMO" % e)


def turns(data):
    out = []
    for conv in data:
        c = conv["conversation"]
        n = 1
        while ("session_%d" % n) in c:
            for t in c["session_%d" % n]:
                if isinstance(t, dict) and t.get("text"):
                    out.append(t["text"].replace("\n", " "))
            n += 1
    return out


def repeated(unit, size):
    s = (unit + " ") * (size // (len(unit) + 1) + 1)
    return s[:size].rstrip()


def main(argv):
    if len(argv) < 2:
        sys.exit(__doc__)
    what = argv[1]
    if what == "memories":
        n = int(argv[2])
        ns = argv[argv.index("--ns") + 1] if "--ns" in argv else "big"
        t = turns(load())
        w = sys.stdout.write
        for i in range(n):
            p, a = divmod(i, len(t))
            b = (a + 1 + p) % len(t)  # another pairing on each pass
            w(json.dumps({"ns": ns, "id": "m%d" % i, "text": t[a] + " " + t[b]}) + "\n")
    elif what == "questions":
        for conv in load():
            for qa in conv["qa"]:
                q = qa.get("question")
                if q:
                    print(q.replace("\n", " "))
    elif what == "passage":
        words = " ".join(turns(load())[:40]).split()[:200]
        print(repeated(" ".join(words), int(argv[2])))
    elif what == "words":
        print(repeated(" ".join(argv[3:]), int(argv[2])))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
