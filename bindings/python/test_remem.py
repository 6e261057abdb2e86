"""test_remem.py: the Python binding against the real libremem.so.

Each test opens a fresh store in a temporary directory with the hash
embedder (deterministic, no model needed). The first test compiles a small
C program that prints the offset of every field of every mirrored structure
and compares it with ctypes' layout: a field added to include/remem.h and not
here fails it. Run: python3 -m unittest -v test_remem (tests/e2e/python_binding.sh).
"""

import datetime
import math
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import remem  # noqa: E402

ROOT = os.environ.get("REMEM_ROOT") or os.path.normpath(
    os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))


class StoreTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="remem-py-")
        self.path = os.path.join(self.dir, "t.db")
        self.db = remem.open(self.path, embedder="hash")

    def tearDown(self):
        self.db.close()
        shutil.rmtree(self.dir, ignore_errors=True)

    def seed(self, ns="agent:a"):
        ids = {}
        ids["tea"] = self.db.add(ns, "The user drinks green tea every morning and never coffee",
                                 kind="observation", importance=0.4,
                                 metadata={"topic": "drinks"})
        ids["deploy"] = self.db.add(ns, "Production deploys happen on Tuesdays after the standup",
                                    kind="decision", importance=0.9,
                                    metadata={"topic": "ops", "reward": 0.5})
        ids["password"] = self.db.add(ns, "The staging database password rotates every thirty days",
                                      kind="lesson", importance=0.6,
                                      metadata={"topic": "ops"})
        return ids


class LayoutTest(unittest.TestCase):
    def test_structs_match_the_c_header(self):
        cc = shutil.which("cc") or shutil.which("gcc")
        if not cc:
            self.skipTest("no C compiler")
        lines = ["#include <stdio.h>", "#include <stddef.h>", '#include "remem.h"',
                 "int main(void) {"]
        expected = []
        for cname, cls in remem._STRUCTS.items():
            lines.append(f'printf("%zu\\n", sizeof({cname}));')
            expected.append((f"sizeof {cname}", __import__("ctypes").sizeof(cls)))
            for fname, _ in cls._fields_:
                lines.append(f'printf("%zu\\n", offsetof({cname}, {fname}));')
                expected.append((f"{cname}.{fname}", getattr(cls, fname).offset))
        lines.append("return 0; }")
        with tempfile.TemporaryDirectory() as d:
            src, exe = os.path.join(d, "layout.c"), os.path.join(d, "layout")
            with open(src, "w") as f:
                f.write("\n".join(lines))
            subprocess.run([cc, "-std=c11", "-I", os.path.join(ROOT, "include"), src,
                            "-o", exe], check=True)
            got = subprocess.run([exe], check=True, capture_output=True,
                                 text=True).stdout.split()
        self.assertEqual(len(got), len(expected))
        for (what, want), have in zip(expected, got):
            self.assertEqual(int(have), want, what)
        # Every field of the C structures is mirrored (a field the header
        # gained would change a size above, or shift an offset).
        self.assertGreater(len(expected), 60)


class OpenCloseTest(unittest.TestCase):
    def test_context_manager_closes(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "x.db")
            with remem.open(path, embedder="hash") as db:
                mid = db.add("ns", "a memory that outlives its handle")
                self.assertEqual(db.embedder_name, "hash")
                self.assertGreater(db.embedder_dim, 0)
                self.assertTrue(db.embedder_model)
            with self.assertRaises(remem.RememError):
                db.add("ns", "after close")
            db.close()  # twice is fine
            with remem.Remem(path, embedder="hash") as again:
                self.assertEqual(again.get("ns", mid).text, "a memory that outlives its handle")

    def test_open_failure_carries_the_message(self):
        with tempfile.TemporaryDirectory() as d:
            with self.assertRaises(remem.RememError) as cm:
                remem.open(os.path.join(d, "no", "such", "dir", "x.db"), embedder="hash")
            self.assertLess(cm.exception.code, 0)
            self.assertTrue(cm.exception.name.startswith("REMEM_E"))
            self.assertIn("x.db", str(cm.exception))

    def test_config_and_memory_off(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "x.db")
            with remem.open(path, embedder="hash") as db:
                db.add("agent:a", "the carrier group sailed at dawn")
            cfg = os.path.join(d, "memory.yaml")
            with open(cfg, "w") as f:
                f.write("retrieval:\n  top_k: 5\n  relevance_weight: 0.4\n")
            with remem.open(path, embedder="hash", config=cfg) as db:
                r = db.recall("carrier", ns="agent:a")
                self.assertEqual((r.profile, r.memory, len(r)), ("stream", "on", 1))
                shown = db.call("config.show", ns="agent:a")
                self.assertEqual(shown["policy"]["top_k"], 5)
            with remem.open(path, embedder="hash", no_memory=True) as db:
                r = db.recall("carrier", ns="agent:a")
                self.assertEqual((len(r), r.memory), (0, "off"))
                self.assertEqual(db.add("agent:a", "dropped", with_outcome=True), ("", "dropped"))
            with remem.open(path, embedder="hash") as db:
                self.assertEqual(len(db.recall("dropped", ns="agent:a")), 1)  # only the first
            with open(cfg, "w") as f:
                f.write("retrieval:\n  top_k: five\n")
            with self.assertRaises(remem.RememError) as cm:
                remem.open(path, embedder="hash", config=cfg)
            self.assertIn("line 2: retrieval.top_k: expected an integer", str(cm.exception))

    def test_unknown_embedder_is_an_error(self):
        with tempfile.TemporaryDirectory() as d:
            with self.assertRaises(remem.RememError) as cm:
                remem.open(os.path.join(d, "x.db"), embedder="no-such-embedder")
            self.assertIn("no-such-embedder", cm.exception.message)


class WriteTest(StoreTest):
    def test_add_and_get(self):
        mid = self.db.add("agent:a", "The user likes jazz", kind="observation",
                          importance=0.7, metadata={"mood": "calm", "n": 3},
                          links=["x1", "x2"])
        m = self.db.get("agent:a", mid)
        self.assertIsInstance(m, remem.Memory)
        self.assertEqual((m.id, m.ns, m.text, m.kind), (mid, "agent:a", "The user likes jazz", "observation"))
        self.assertAlmostEqual(m.importance, 0.7)
        self.assertEqual(m.metadata, {"mood": "calm", "n": 3})
        self.assertEqual(m.links, ["x1", "x2"])
        self.assertEqual(m.tier, "short")
        self.assertTrue(m.valid)
        self.assertGreater(m.created_at, 0)
        self.assertIsInstance(m.created, datetime.datetime)
        self.assertTrue(m.model)

    def test_duplicate_and_upsert_outcomes(self):
        mid, outcome = self.db.add("n", "Same text twice", with_outcome=True)
        self.assertEqual(outcome, "added")
        again, outcome = self.db.add("n", "Same text twice", with_outcome=True)
        self.assertEqual((again, outcome), (mid, "duplicate"))
        self.assertEqual(self.db.get("n", mid).duplicate_count, 1)
        mine, outcome = self.db.add("n", "first version", id="my-id", with_outcome=True)
        self.assertEqual((mine, outcome), ("my-id", "added"))
        mine, outcome = self.db.add("n", "second version", id="my-id", with_outcome=True)
        self.assertEqual((mine, outcome), ("my-id", "upserted"))
        self.assertEqual(self.db.get("n", "my-id").text, "second version")

    def test_created_at_accepts_iso_datetime_and_ms(self):
        a = self.db.add("n", "iso", created_at="2023-05-08T13:56:00Z")
        b = self.db.add("n", "datetime", created_at=datetime.datetime(2023, 5, 8, 13, 56))
        c = self.db.add("n", "ms", created_at=1683554160000)
        for mid in (a, b, c):
            self.assertEqual(self.db.get("n", mid).created_at, 1683554160000)
        with self.assertRaises(remem.ParseError):
            self.db.add("n", "bad time", created_at="last tuesday-ish")

    def test_add_many_is_one_transaction(self):
        ids = self.db.add_many([
            {"text": "one", "kind": "observation"},
            {"text": "two", "importance": 0.9},
            {"ns": "other", "text": "three", "metadata": {"k": 1}},
        ], ns="batch")
        self.assertEqual(len(ids), 3)
        self.assertEqual(len(set(ids)), 3)
        self.assertEqual(self.db.get("batch", ids[1]).text, "two")
        self.assertEqual(self.db.get("other", ids[2]).metadata, {"k": 1})
        counts = {n["ns"]: n["count"] for n in self.db.namespaces()}
        self.assertEqual(counts, {"batch": 2, "other": 1})
        # A bad memory in the middle: nothing is written, the index says which.
        with self.assertRaises(remem.RememError) as cm:
            self.db.add_many([{"text": "fine"}, {"text": "bad", "importance": 7},
                              {"text": "also fine"}], ns="batch2")
        self.assertEqual(cm.exception.index, 1)
        self.assertNotIn("batch2", {n["ns"] for n in self.db.namespaces()})
        with self.assertRaises(remem.InvalidArgumentError) as cm:
            self.db.add_many([{"text": "fine"}, {"kind": "no text"}], ns="batch2")
        self.assertEqual(cm.exception.index, 1)
        self.assertEqual(self.db.add_many([]), [])

    def test_invalid_arguments_raise_with_the_message(self):
        with self.assertRaises(remem.InvalidArgumentError) as cm:
            self.db.add("n", "too important", importance=3)
        self.assertEqual(cm.exception.code, -1)
        self.assertEqual(cm.exception.name, "REMEM_EINVAL")
        self.assertTrue(cm.exception.message)
        with self.assertRaises(remem.RememError):
            self.db.add("n", "")
        with self.assertRaises(remem.RememError):
            self.db.add("n", "bad metadata", metadata="[1, 2]")

    def test_strings_are_refused_not_converted(self):
        # Issue 8 item 9: a NUL cut the string short in C ("a\x00b" wrote to
        # namespace "a"), bytes became "b'...'" and ints "5". Each is now an
        # error naming the argument, and nothing is written.
        cases = [
            (lambda: self.db.add("a\x00b", "text"), ValueError, "ns: contains a NUL"),
            (lambda: self.db.add("n", "x\x00y"), ValueError, "text: contains a NUL"),
            (lambda: self.db.add("n", b"bytes text"), TypeError, "text: must be a str, not bytes"),
            (lambda: self.db.add(b"n", "text"), TypeError, "ns: must be a str, not bytes"),
            (lambda: self.db.add("n", 5), TypeError, "text: must be a str, not int"),
            (lambda: self.db.add("n", "t", kind=7), TypeError, "kind: must be a str"),
            (lambda: self.db.add("n", "t", id="a\x00"), ValueError, "id: contains a NUL"),
            (lambda: self.db.add("n", "\ud800"), ValueError, "text: not encodable as UTF-8"),
            (lambda: self.db.add("n", "t", importance="0.5"), TypeError, "importance: must be a number"),
            (lambda: self.db.add("n", "t", metadata=b"{}"), TypeError, "metadata: must be a dict"),
            (lambda: self.db.add("n", "t", created_at=b"2023"), TypeError, "created_at: must be"),
            (lambda: self.db.add("n", "t", created_at="2023-02-31"), remem.ParseError,
             'created_at: "2023-02-31" is not a valid time (February 2023 has 28 days)'),
            (lambda: self.db.recall("q", ns="n\x00x"), ValueError, "ns: contains a NUL"),
            (lambda: self.db.recall(b"q", ns="n"), TypeError, "query: must be a str"),
        ]
        for call, exc, words in cases:
            with self.assertRaises(exc) as cm:
                call()
            self.assertIn(words, str(cm.exception))
        self.assertEqual(self.db.namespaces(), [])

    def test_recall_numbers_follow_the_library_rules(self):
        self.seed()
        # A huge k fell back to the profile's default (a C int overflow);
        # now every face's one message: the same for 1001 and 10**9.
        for k, shown in ((1001, "1001"), (10**9, "1000000000"), (1e9, "1000000000"),
                         (2**40, "1099511627776")):
            with self.assertRaises(remem.InvalidArgumentError) as cm:
                self.db.recall("tea", ns="agent:a", k=k)
            self.assertIn(f"k: {shown} is above the limit of 1000", str(cm.exception))
        bad = [
            (dict(k=0), remem.InvalidArgumentError, "k: 0 is below the minimum of 1"),
            (dict(k=2.5), remem.InvalidArgumentError, "k: 2.5 is not a whole number"),
            (dict(k="5"), TypeError, "k: must be an int, not str"),
            (dict(k=True), TypeError, "k: must be an int, not bool"),
            (dict(w_relevance=-1), remem.InvalidArgumentError,
             "w_relevance: -1 is below the minimum of 0"),
            (dict(w_recency=float("inf")), remem.InvalidArgumentError,
             "w_recency: must be a finite number"),
            (dict(recency_base=5), remem.InvalidArgumentError,
             "recency_base: 5 is above the limit of 1"),
            (dict(half_life_hours=-2), remem.InvalidArgumentError,
             "half_life_hours: -2 must be above 0"),
            (dict(min_score=float("nan")), remem.InvalidArgumentError,
             "min_score: must be a finite number"),
            (dict(touch=0), TypeError, "touch: must be a bool"),
            (dict(now="2023-02-31"), remem.InvalidArgumentError,
             'now: "2023-02-31" is not a valid time'),
        ]
        for kw, exc, words in bad:
            with self.assertRaises(exc, msg=str(kw)) as cm:
                self.db.recall("tea", ns="agent:a", **kw)
            self.assertIn(words, str(cm.exception))
        # The JSON form takes exactly the server's query.
        res = self.db.recall_json({"namespaces": ["agent:a"], "text": "green tea", "k": 1})
        self.assertEqual(len(res), 1)
        with self.assertRaises(remem.InvalidArgumentError) as cm:
            self.db.recall_json('{"namespaces":["agent:a"],"text":"tea","kk":1}')
        self.assertIn("kk: unknown field", str(cm.exception))
        with self.assertRaises(remem.ParseError):
            self.db.recall_json("[1]")

    def test_update_keeps_history(self):
        ids = self.seed()
        m = self.db.update("agent:a", ids["tea"], text="The user drinks jasmine tea",
                           importance=0.8, metadata={"topic": "drinks", "v": 2},
                           actor="tester")
        self.assertEqual(m.text, "The user drinks jasmine tea")
        self.assertAlmostEqual(m.importance, 0.8)
        self.assertEqual(m.metadata, {"topic": "drinks", "v": 2})
        hist = self.db.history("agent:a", ids["tea"])
        self.assertGreaterEqual(len(hist), 2)
        self.assertEqual([h["op"] for h in hist][:1], ["add"])
        self.assertIn("update", [h["op"] for h in hist])
        self.assertIn("tester", [h.get("actor") for h in hist])
        with self.assertRaises(remem.InvalidArgumentError):
            self.db.update("agent:a", ids["tea"])
        with self.assertRaises(remem.NotFoundError) as cm:
            self.db.update("agent:a", "no-such-id", text="x")
        self.assertEqual(cm.exception.name, "REMEM_ENOTFOUND")
        self.assertIsInstance(cm.exception, KeyError)

    def test_invalidate_forget_purge(self):
        ids = self.seed()
        new = self.db.add("agent:a", "Production deploys moved to Thursdays")
        self.db.invalidate("agent:a", ids["deploy"], superseded_by=new, reason="moved")
        m = self.db.get("agent:a", ids["deploy"])
        self.assertFalse(m.valid)
        self.assertEqual(m.superseded_by, new)
        got = [h.id for h in self.db.recall("production deploys", ns="agent:a")]
        self.assertNotIn(ids["deploy"], got)
        self.assertIn(new, got)
        got = [h.id for h in self.db.recall("production deploys", ns="agent:a", include_invalid=True)]
        self.assertIn(ids["deploy"], got)

        self.db.forget("agent:a", ids["tea"])
        self.assertEqual(self.db.get("agent:a", ids["tea"]).tier, "archived")
        self.assertNotIn(ids["tea"], [h.id for h in self.db.recall("green tea", ns="agent:a")])
        self.db.forget("agent:a", ids["password"], purge=True)
        with self.assertRaises(remem.NotFoundError):
            self.db.get("agent:a", ids["password"])
        hist = self.db.history("agent:a", ids["password"])
        self.assertTrue(hist)
        self.assertNotIn("thirty days", str(hist[-1]))

    def test_clear(self):
        self.seed("agent:z")
        self.assertEqual(self.db.clear("agent:z"), 3)
        self.assertEqual(len(self.db.recall("tea", ns="agent:z")), 0)


class RecallTest(StoreTest):
    def test_the_right_memory_comes_first_with_components(self):
        ids = self.seed()
        res = self.db.recall("what does the user drink in the morning? tea or coffee",
                             ns="agent:a", k=2)
        self.assertIsInstance(res, remem.RecallResult)
        self.assertLessEqual(len(res), 2)
        self.assertEqual(res[0].id, ids["tea"])
        hit = res[0]
        self.assertIsInstance(hit, remem.Hit)
        self.assertIsInstance(hit.memory, remem.Memory)
        for name in ("score", "relevance", "lexical", "bm25", "recency", "importance", "context"):
            v = getattr(hit, name)
            self.assertIsInstance(v, float, name)
            self.assertFalse(math.isnan(v), name)
        self.assertTrue(hit.similarity is None or -1.0 <= hit.similarity <= 1.0)
        self.assertGreater(hit.relevance, 0)
        self.assertGreater(hit.lexical, 0)  # "tea", "coffee", "morning" match
        self.assertTrue(set(hit.lanes) <= {"vector", "lexical"} and hit.lanes)
        self.assertAlmostEqual(hit.importance, 0.4, places=6)
        self.assertEqual(res.profile, "default")
        self.assertGreaterEqual(res.candidates, len(res))
        self.assertGreaterEqual(res.took_ms, 0)
        scores = [h.score for h in res]
        self.assertEqual(scores, sorted(scores, reverse=True))

    def test_filter_and_profile(self):
        ids = self.seed()
        res = self.db.recall("production deploys on tuesdays", ns="agent:a",
                             filter={"topic": "ops"})
        self.assertEqual(res[0].id, ids["deploy"])
        self.assertTrue(all(h.memory.metadata["topic"] == "ops" for h in res))
        res = self.db.recall("deploys", ns="agent:a", filter='{"kind": "decision"}')
        self.assertEqual([h.id for h in res], [ids["deploy"]])
        res = self.db.recall("tea", ns="agent:a", profile="stream")
        self.assertEqual(res.profile, "stream")
        with self.assertRaises(remem.ProfileError):
            self.db.recall("tea", ns="agent:a", profile="no-such-profile")

    def test_malformed_filter_names_the_fault(self):
        self.seed()
        with self.assertRaises(remem.FilterError) as cm:
            self.db.recall("tea", ns="agent:a", filter={"kind": {"$regexx": "x"}})
        self.assertEqual(cm.exception.name, "REMEM_EFILTER")
        self.assertEqual(cm.exception.code, -3)
        self.assertIn("$regexx", cm.exception.message)
        self.assertIsInstance(cm.exception, ValueError)

    def test_overrides_touch_and_now(self):
        ids = self.seed()
        before = self.db.get("agent:a", ids["tea"]).access_count
        fixed = 1893456000000  # 2030-01-01
        res = self.db.recall("green tea", ns="agent:a", touch=False, now=fixed,
                             w_relevance=1, w_lexical=0, w_recency=0, w_importance=0,
                             w_context=0)
        self.assertEqual(res.now, fixed)
        self.assertEqual(self.db.get("agent:a", ids["tea"]).access_count, before)
        for h in res:
            # Only relevance weighs: the score is the relevance.
            self.assertAlmostEqual(h.score, h.relevance, places=6)
        self.db.recall("green tea", ns="agent:a", k=1)
        self.assertEqual(self.db.get("agent:a", ids["tea"]).access_count, before + 1)
        res = self.db.recall("green tea", ns="agent:a", min_score=1e9)
        self.assertEqual(len(res), 0)

    def test_namespaces_are_kept_apart(self):
        a = self.seed("agent:a")
        b = self.db.add("agent:b", "The user drinks green tea, says agent b")
        only_a = [h.id for h in self.db.recall("green tea", ns="agent:a")]
        self.assertIn(a["tea"], only_a)
        self.assertNotIn(b, only_a)
        both = [h.id for h in self.db.recall("green tea", namespaces=["agent:a", "agent:b"])]
        self.assertIn(a["tea"], both)
        self.assertIn(b, both)
        with self.assertRaises(remem.InvalidArgumentError):
            self.db.recall("green tea")

    def test_recall_by_vector(self):
        ids = self.seed()
        [vec] = self.db.embed(["green tea in the morning"])
        self.assertEqual(len(vec), self.db.embedder_dim)
        self.assertAlmostEqual(sum(x * x for x in vec), 1.0, places=4)
        res = self.db.recall(vector=vec, ns="agent:a")
        self.assertEqual(res[0].id, ids["tea"])
        with self.assertRaises(remem.RememError):
            self.db.recall(vector=vec[:5], ns="agent:a")


class InfoTest(StoreTest):
    def test_stats_namespaces_profiles(self):
        self.seed("agent:a")
        self.db.add("agent:b", "one more")
        names = {n["ns"]: n for n in self.db.namespaces()}
        self.assertEqual(names["agent:a"]["count"], 3)
        self.assertEqual(names["agent:b"]["count"], 1)
        self.assertEqual(names["agent:a"]["dim"], self.db.embedder_dim)
        stats = self.db.stats()
        self.assertIsInstance(stats, dict)
        self.assertEqual(stats["memories"], 4)
        self.assertEqual(stats["by_namespace"], {"agent:a": 3, "agent:b": 1})
        self.assertIsInstance(self.db.stats("agent:a"), dict)
        profiles = remem.profiles()
        for p in ("default", "generative-agents", "metaverse", "stream", "replay", "episodes"):
            self.assertIn(p, profiles)
        self.assertIsInstance(remem.profile("stream"), dict)
        with self.assertRaises(remem.ProfileError):
            remem.profile("nope")
        self.assertGreater(remem.now(), 1.7e12)


class ThreadTest(unittest.TestCase):
    def test_one_handle_per_thread_loses_nothing(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "threads.db")
            remem.open(path, embedder="hash").close()
            errors = []

            def work(t):
                try:
                    with remem.open(path, embedder="hash") as db:
                        for i in range(25):
                            db.add(f"t{t}", f"thread {t} memory {i}")
                except Exception as e:  # reported below
                    errors.append(e)

            threads = [threading.Thread(target=work, args=(t,)) for t in range(4)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            self.assertEqual(errors, [])
            with remem.open(path, embedder="hash") as db:
                counts = {n["ns"]: n["count"] for n in db.namespaces()}
            self.assertEqual(counts, {f"t{t}": 25 for t in range(4)})


if __name__ == "__main__":
    unittest.main(verbosity=2)
