#!/usr/bin/env python3
"""episodes_faces.py: issue 11's acceptance check 1 through the faces.
Episodes of two projects and two languages added with the CLI; recall
with project and language filters and minSimilarity never returns another
project's episode (CLI and HTTP agree); a duplicate pair bumps the count;
prune --dry-run and prune give the same PruneReport, whose ids are exactly
those gone from recall; restore brings them back identical. Then `remem
serve --maintain-every` archives an expired episode in its background
thread while recall keeps answering."""
import json, os, subprocess, sys, tempfile, time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serve_util import BIN, Server, check, finish

os.environ["REMEM_EMBEDDER"] = "hash"
tmp = tempfile.mkdtemp(prefix="remem-episodes-")
db = os.path.join(tmp, "store.db")
arch = os.path.join(tmp, "arch")


def cli(*args, ok=True):
    p = subprocess.run([BIN, "--db", db] + list(args), capture_output=True, text=True)
    if ok and p.returncode != 0:
        print("command failed:", args, p.stderr)
    return p


def cli_json(*args):
    p = cli(*args, "--json")
    return json.loads(p.stdout) if p.returncode == 0 else None


def add(project, task, lang, prompt, output, ts):
    meta = {"taskID": task, "projectID": project, "language": lang, "timestamp": ts,
            "modelUsed": "m", "tokensIn": 5, "tokensOut": 7, "generationOutcome": "accepted",
            "filesChanged": ["x.py"]}
    return cli_json("episode", "add", "--ns", "e", "--prompt", prompt, "--output", output,
                    "--meta", json.dumps(meta))


eps = [("alpha", "a1", "python", "read a json config file", "json.load(f)", "2026-01-01T00:00:00Z"),
       ("alpha", "a2", "go", "read a json config file", "json.NewDecoder(f)", "2026-01-02T00:00:00Z"),
       ("alpha", "a3", "python", "write a json config file", "json.dump(c, f)", "2026-03-01T00:00:00Z"),
       ("alpha", "a4", "python", "merge two json config files", "a | b", "2026-03-02T00:00:00Z"),
       ("beta", "b1", "python", "read a json config file", "orjson.loads(f.read())", "2026-01-03T00:00:00Z"),
       ("beta", "b2", "go", "read a json config file quickly", "jsoniter.Unmarshal", "2026-03-03T00:00:00Z")]
for e in eps:
    r = add(*e)
    check(r and r["outcome"] == "added", "episode add %s" % e[1])
r = add(*eps[0][:5], "2026-01-05T00:00:00Z")
check(r and r["outcome"] == "duplicate" and r["duplicateCount"] == 1, "a duplicate pair bumps the count")


def recall(*extra):
    r = cli_json("episode", "recall", "--ns", "e", "--query", "read a json config file",
                 "--max", "50", *extra)
    return r


r = recall("--project", "alpha", "--min-similarity", "0")
projects = {x["metadata"]["projectID"] for x in r["episodes"]}
check(projects == {"alpha"} and len(r["episodes"]) == 4, "recall --project alpha: alpha's 4 only")
r = recall("--project", "beta", "--language", "go", "--min-similarity", "0")
check([x["id"] for x in r["episodes"]] == ["beta_b2_1772496000000"], "project and language filters")
r = recall("--project", "alpha", "--min-similarity", "0.95")
check(all(x["similarity"] >= 0.95 for x in r["episodes"]) and r["tooFewMatches"],
      "minSimilarity 0.95: only those above, and 'too few' said")
p = cli("episode", "recall", "--ns", "e", "--query", "json", ok=False)
check(p.returncode != 0 and "cross-project" in p.stderr, "no project: refused with a reason")

srv = Server(db=db)
st, body = srv.json("POST", "/v1/episode/recall",
                    {"ns": "e", "query": "read a json config file", "project": "alpha",
                     "min_similarity": 0, "max": 50})
check(st == 200 and {x["metadata"]["projectID"] for x in body["episodes"]} == {"alpha"},
      "HTTP /v1/episode/recall: the same filter")
srv.stop()

everyone = ["--cross-project", "--min-similarity", "-1"]
before = {x["id"] for x in recall(*everyone)["episodes"]}
export_before = {json.loads(l)["id"]: l for l in cli("export", "--ns", "e", "--vectors").stdout.splitlines()}
policy = ["--max-episodes-per-project", "2", "--retention-days", "30", "--strategy", "none",
          "--now", "2026-03-10T00:00:00Z", "--archive-location", arch]
dry = cli_json("prune", "--ns", "e", "--dry-run", *policy)
rep = cli_json("prune", "--ns", "e", *policy)
for k in ("timestamp", "episodesRemoved", "episodesArchived", "clustersCreated", "durationMs"):
    check(rep is not None and k in rep, "PruneReport has %s" % k)
check(sorted(dry["episodesRemoved"]) == sorted(rep["episodesRemoved"]), "dry run reports the same ids")
after = {x["id"] for x in recall(*everyone)["episodes"]}
check(before - after == set(rep["episodesRemoved"]) and after < before,
      "the report's ids are exactly those gone from recall")
r = cli_json("restore", "--ns", "e", "--all", "--archive-location", arch)
check(r and r["restored"] == len(rep["episodesRemoved"]), "restore brings them all back")
export_after = {json.loads(l)["id"]: l for l in cli("export", "--ns", "e", "--vectors").stdout.splitlines()}
same = all(export_after.get(i) == export_before[i] for i in rep["episodesRemoved"])
check(same, "restored episodes identical field by field (vectors included)")

# The server's maintenance thread: an episode of 2019 is past retentionDays (90).
add("gamma", "old", "python", "an ancient episode", "print('old')", "2019-01-01T00:00:00Z")
# Seed 003's keys in the configuration file beside the store: the
# schedule (about a second) and the retention come from there.
with open(os.path.join(tmp, "remem.yaml"), "w") as f:
    f.write("memoryAgent:\n  retentionDays: 90\n  pruneIntervalHours: 0.0003\n")
srv = Server(db=db)
gone = False
for _ in range(40):
    time.sleep(0.25)
    st, body = srv.json("POST", "/v1/episode/recall",
                        {"ns": "e", "query": "an ancient episode", "project": "gamma",
                         "min_similarity": -1})
    if st == 200 and not body["episodes"]:
        gone = True
        break
check(gone, "serve (pruneIntervalHours) archived the expired episode; recall answered meanwhile")
srv.stop()
lst = cli_json("archive", "list", "--ns", "e", "--ids")
check(lst and "gamma_old_1546300800000" in lst["ids"], "it is in the default archive (store + .archive)")
subprocess.run(["rm", "-rf", tmp])
finish()
