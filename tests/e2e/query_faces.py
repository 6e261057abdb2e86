"""query_faces.py: one table of recall queries, good and bad, fed to the
three faces of remem: HTTP (a real `remem serve` on a free loopback port),
MCP (`remem mcp` over stdio, the recall tool) and the CLI (`remem recall
--query-json`). Every face hands the query to the library's one parser
(remem_query_parse), so for each row all three must agree: the same hits
(in the same order) for a good query, and for a bad one a refusal whose
message is the same text on every face and holds the words of the row.

A row: (name, query, expected) where expected is None for "accepted" or
the words the error message must contain. MCP's own spellings (ns as a
name or a list, query) are checked separately at the end.
Run: tests/e2e/query_faces.sh (tests/run.sh runs it).
"""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serve_util import BIN, Server, check, finish  # noqa: E402

NS = "agent:ada"
GOOD = {"namespaces": [NS], "text": "deploys on tuesday"}


def q(**fields):
    """GOOD with fields changed; a value of ... removes the field."""
    out = dict(GOOD)
    for k, v in fields.items():
        if v is ...:
            out.pop(k, None)
        else:
            out[k] = v
    return out


TABLE = [
    # ---- accepted ----
    ("plain text", q(), None),
    ("namespaces as one name", q(namespaces=NS), None),
    ("two namespaces", q(namespaces=[NS, "agent:bob"]), None),
    ("k 2", q(k=2), None),
    ("k 2.0 is a whole number", q(k=2.0), None),
    ("k 1000", q(k=1000), None),
    ("profile stream", q(profile="stream"), None),
    ("filter object", q(filter={"kind": "decision"}), None),
    ("filter as JSON text", q(filter='{"kind":"decision"}'), None),
    ("filter on a leap day", q(filter={"created_at": {"$gt": "2024-02-29"}}), None),
    ("weights", q(w_relevance=0, w_lexical=1, w_recency=0.5, w_importance=0, w_context=0), None),
    ("tiers as a list", q(tiers=["short", "long"]), None),
    ("tiers as text", q(tiers="short"), None),
    ("now ISO", q(now="2026-01-01T00:00:00Z"), None),
    ("now with an offset and fraction", q(now="2026-01-01T02:00:00.5+02:00"), None),
    ("now in ms", q(now=1767225600000), None),
    ("decay overrides", q(recency_base=0.5, half_life_hours=24), None),
    ("thresholds", q(min_score=-5, min_similarity=-1), None),
    ("normalize, include_invalid", q(normalize=True, include_invalid=True), None),
    ("candidates", q(candidates=20), None),
    ("null means absent", q(profile=None, k=None, filter=None), None),
    # ---- refused ----
    ("missing text", q(text=...), "query: missing; give query (or vector) to recall by"),
    ("empty text", q(text=""), "text: empty"),
    ("text not a string", q(text=5), "text: must be a string, got a number"),
    # The message names the argument as the caller spelled it.
    ("query not a string", {"ns": [NS], "query": 5}, "query: must be a string, got a number"),
    ("ns not names", {"ns": 5, "query": "deploys"},
     "ns: must be a name or a list of names"),
    ("ns with a number", {"ns": [NS, 3], "query": "deploys"},
     "ns: item 1 must be a non-empty string"),
    ("namespaces an object", q(namespaces={"a": 1}),
     "namespaces: must be a name or a list of names"),
    ("k 0", q(k=0), "k: 0 is below the minimum of 1"),
    ("k 1001", q(k=1001), "k: 1001 is above the limit of 1000"),
    ("k 1e9", q(k=1e9), "k: 1000000000 is above the limit of 1000"),
    ("k as a string", q(k="5"), "k: must be an integer, got a string"),
    ("k 2.5", q(k=2.5), "k: 2.5 is not a whole number"),
    ("unknown profile", q(profile="nope"), 'unknown profile "nope"'),
    ("unknown filter operator", q(filter={"kind": {"$regexx": "a"}}), "$regexx"),
    ("filter not an object", q(filter=[1]), "filter: must be an object"),
    ("impossible date in a filter", q(filter={"created_at": {"$gt": "2023-02-31"}}),
     'created_at: "2023-02-31" is not a valid time (February 2023 has 28 days)'),
    ("negative weight", q(w_recency=-0.5), "w_recency: -0.5 is below the minimum of 0"),
    ("huge weight", q(w_relevance=1e300), "w_relevance: 1e+300 is above the limit of 1000000"),
    ("weight as a string", q(w_lexical="1"), "w_lexical: must be a number, got a string"),
    ("recency_base 5", q(recency_base=5), "recency_base: 5 is above the limit of 1"),
    ("recency_base 0", q(recency_base=0), "recency_base: 0 must be above 0"),
    ("half-life 0", q(half_life_hours=0), "half_life_hours: 0 must be above 0"),
    ("impossible date in now", q(now="2023-02-31"),
     'now: "2023-02-31" is not a valid time (February 2023 has 28 days)'),
    ("hour 25 in now", q(now="2023-05-08T25:00:00Z"), "hour 25 is not in 0..23"),
    ("now not a time", q(now=True), "now: must be milliseconds or an ISO 8601 string"),
    ("unknown field", q(frobnicate=1), "frobnicate: unknown field"),
    ("namespaces empty", q(namespaces=[]), "namespaces: empty"),
    ("namespace empty name", q(namespaces=[""]), "namespaces: item 0 must be a non-empty string"),
    ("touch not a bool", q(touch="yes"), "touch: must be true or false, got a string"),
    ("tiers with a number", q(tiers=[1]), "tiers: item 0 must be a string"),
    ("unknown tier", q(tiers=["medium"]), 'unknown tier "medium"'),
    ("vector of the wrong size", q(text=..., vector=[0.1, 0.2]), "dimensions"),
    ("vector with a string", q(vector=[0.1, "x"]), "vector: item 1 must be a number"),
    ("candidates above the bound", q(candidates=100001),
     "candidates: 100001 is above the limit of 100000"),
]


# ---- the three faces: each returns ("ok", [hit ids]) or ("error", message) ----

def unprefixed(message):
    """The library's message after the operation's name, which every
    failure of an operation starts with ("recall: k: ...")."""
    return message[len("recall: "):] if message.startswith("recall: ") else message


def via_http(srv, query):
    status, body = srv.json("POST", "/v1/recall", query)
    if status == 200:
        return "ok", [h["id"] for h in body["hits"]]
    return "error", unprefixed(body["error"]["message"]) if isinstance(body, dict) else str(body)


class Mcp:
    def __init__(self, db):
        self.p = subprocess.Popen([BIN, "mcp", "--db", db], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        self.n = 0
        self.send("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                 "clientInfo": {"name": "query_faces", "version": "1"}})

    def send(self, method, params):
        self.n += 1
        self.p.stdin.write(json.dumps({"jsonrpc": "2.0", "id": self.n, "method": method,
                                       "params": params}) + "\n")
        self.p.stdin.flush()
        return json.loads(self.p.stdout.readline())

    def recall(self, args):
        r = self.send("tools/call", {"name": "recall", "arguments": args})["result"]
        if not r.get("isError"):
            return "ok", [h["id"] for h in r["structuredContent"]["hits"]]
        text = r["content"][0]["text"]
        # "recall failed: MESSAGE [REMEM_STATUS]": the message is the library's
        if text.startswith("recall failed: ") and text.endswith("]"):
            text = text[len("recall failed: "):text.rindex(" [")]
        return "error", unprefixed(text)

    def close(self):
        self.p.stdin.close()
        self.p.wait(30)


def via_cli(db, query):
    p = subprocess.run([BIN, "--db", db, "--json", "recall", "--query-json", json.dumps(query)],
                       capture_output=True, text=True)
    if p.returncode == 0:
        return "ok", [h["id"] for h in json.loads(p.stdout)["hits"]]
    err = [l for l in p.stderr.splitlines() if not l.startswith("remem: note:")]
    line = err[-1] if err else ""
    prefix = "remem: "
    return "error", unprefixed(line[len(prefix):] if line.startswith(prefix) else line)


def seed(db, tmp):
    lines = [
        {"ns": NS, "id": "d1", "text": "Production deploys happen on Tuesdays", "kind": "decision",
         "created_at": "2025-03-01T10:00:00Z", "importance": 0.9},
        {"ns": NS, "id": "o1", "text": "The tuesday deploy broke staging once", "created_at":
         "2025-03-02T10:00:00Z"},
        {"ns": NS, "id": "o2", "text": "Maya prefers blue-green deployments", "created_at":
         "2025-03-03T10:00:00Z", "tier": "long"},
        {"ns": "agent:bob", "id": "b1", "text": "Bob deploys on fridays, against advice"},
    ]
    path = os.path.join(tmp, "seed.jsonl")
    with open(path, "w") as f:
        for l in lines:
            f.write(json.dumps(l) + "\n")
    subprocess.run([BIN, "--db", db, "import", path], check=True, capture_output=True)


def main():
    os.environ.setdefault("REMEM_EMBEDDER", "hash")
    tmp = tempfile.mkdtemp(prefix="remem-faces-")
    db = os.environ.get("REMEM_TEST_DB") or os.path.join(tmp, "store.db")
    seed(db, tmp)
    srv = Server(db=db)
    mcp = Mcp(db)
    try:
        for name, query, expected in TABLE:
            # No touching, so that the faces see the same store one after another.
            query = dict(query)
            query.setdefault("touch", False)
            got = {"http": via_http(srv, query), "mcp": mcp.recall(query),
                   "cli": via_cli(db, query)}
            kinds = {face: r[0] for face, r in got.items()}
            want = "ok" if expected is None else "error"
            if not check(set(kinds.values()) == {want},
                         "%s: every face %s" % (name, "accepts" if want == "ok" else "refuses")):
                print("     ", got)
                continue
            answers = {json.dumps(r[1]) for r in got.values()}
            if want == "ok":
                check(len(answers) == 1, "%s: the same hits on every face %s" % (name, got["http"][1]))
            else:
                check(len(answers) == 1, "%s: the same message on every face" % name) or \
                    print("     ", got)
                check(expected in got["http"][1], "%s: says %r" % (name, expected)) or \
                    print("      got:", got["http"][1])

        # MCP's spellings: ns and query (docs/mcp.md), the same parser.
        no_ns = q(namespaces=..., touch=False)
        check(via_http(srv, no_ns)[1] == "ns: missing; name at least one namespace" and
              via_cli(db, no_ns)[1] == "ns: missing; name at least one namespace" and
              mcp.recall(no_ns)[1] == "ns: missing; name at least one namespace",
              "no namespaces: HTTP, MCP and the CLI refuse alike")
        r = mcp.recall({"query": "deploys on tuesday", "ns": NS, "k": 1001})
        check(r == ("error", "k: 1001 is above the limit of 1000"),
              "MCP's query/ns conveniences go through the same parser: %s" % (r,))
        both = {"query": "deploys", "ns": NS, "namespaces": "agent:bob", "touch": False}
        r = mcp.recall(both)
        check(r[0] == "error" and r == via_http(srv, both) == via_cli(db, both),
              "ns and namespaces together: every face refuses alike: %s" % (r,))
        r = mcp.recall({"query": "deploys", "ns": [NS, "agent:bob"], "touch": False})
        check(r[0] == "ok" and r == via_http(srv, q(text="deploys", namespaces=[NS, "agent:bob"])),
              "MCP's ns as a list means namespaces")
        check(mcp.recall({"query": "deploys", "ns": NS, "touch": False}) ==
              via_http(srv, q(text="deploys")), "MCP's query and ns mean text and namespaces")
    finally:
        mcp.close()
        srv.stop()
    finish()


if __name__ == "__main__":
    main()
