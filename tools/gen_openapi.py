#!/usr/bin/env python3
"""gen_openapi.py: writes docs/openapi.json's generated part from the
operations table, so the description cannot drift from it.

The hand-written part (the server's own routes: health, metrics, MCP,
profiles, embed, export, find by id, the error responses) stays as it is
in docs/openapi.json. What this script (re)writes from the table
(remem.operations(), the library's remem_ops()):
  - one path per operation, POST /v1/<name with / for .>, its request
    body the operation's argument schema (the CLI's x-* keywords left
    out), its answer a JSON object, its errors the shared responses;
  - the request of every REST route that names an operation
    (server/route_table.c): its body schema without the path's
    arguments, or, for GET and DELETE routes, one query parameter per
    argument.
Run after changing an operation or a route; tests/e2e/
serve_openapi.sh fails when the committed document differs from what
this script writes, and checks it with an OpenAPI 3.1 validator. With
node installed it also writes the TypeScript client's generated types
(bindings/typescript/src/generated/operations.ts) again.
Usage: tools/gen_openapi.py [--check]   (needs build/libremem.so)
"""
import json, os, re, shutil, subprocess, sys

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(root, "bindings", "python"))
import remem  # noqa: E402

DOC = os.path.join(root, "docs", "openapi.json")
ERRORS = {"400": "BadRequest", "401": "Unauthorized", "403": "Forbidden", "404": "NotFound",
          "409": "Conflict", "413": "TooLarge", "415": "WrongMediaType", "503": "Unavailable"}


def clean(schema):
    """The schema without the CLI's own keywords (x-positional, x-file,
    x-aliases), which OpenAPI tools would warn about."""
    if isinstance(schema, dict):
        return {k: clean(v) for k, v in schema.items() if not k.startswith("x-")}
    if isinstance(schema, list):
        return [clean(v) for v in schema]
    return schema


def errors():
    return {code: {"$ref": "#/components/responses/" + name} for code, name in ERRORS.items()}


def op_path(op):
    schema = clean(op["schema"])
    return {"post": {
        "operationId": "op_" + op["name"].replace(".", "_"),
        "summary": op["summary"].split(". ")[0].rstrip("."),
        "description": op["summary"] + " Needs the \"%s\" right." % op["right"],
        "tags": ["operations"],
        "requestBody": {"required": True, "content": {"application/json": {"schema": schema}}},
        "responses": dict({"200": {"description": "the operation's answer",
                                   "content": {"application/json": {"schema": {"type": "object"}}}}},
                          **errors())}}


def routes():
    """(method, template, operation) of the route table's rows that name one."""
    text = open(os.path.join(root, "server", "route_table.c")).read()
    rows = re.findall(r'\[R_[A-Z_]+\]\s*=\s*\{"([A-Z]+)",\s*"([^"]+)",\s*([^,}]+),\s*"([a-z_.]+)"',
                      text)
    return [(m, p, flags, op) for m, p, flags, op in rows]


def route_request(op, method, path, flags):
    schema = clean(op["schema"])
    captured = set(re.findall(r"\{(\w+)\}", path))
    props = {k: v for k, v in schema.get("properties", {}).items() if k not in captured}
    required = [r for r in schema.get("required", []) if r not in captured]
    if "RF_QUERY" in flags or method in ("GET", "DELETE"):
        params = []
        for k, v in props.items():
            t = v.get("type", "string")
            if isinstance(t, list):
                t = t[0]
            qs = {"type": "string"} if t in ("object", "array") else dict(v, type=t)
            params.append({"name": k, "in": "query", "required": k in required,
                           "description": v.get("description", k) +
                           (" (JSON)" if t == "object" else " (a comma list)" if t == "array" else ""),
                           "schema": qs})
        return {"query": params}
    body = {"type": "object", "properties": props}
    if required:
        body["required"] = required
    if schema.get("additionalProperties") is False:
        body["additionalProperties"] = False
    return {"body": body}


def build(doc):
    ops = {o["name"]: o for o in remem.operations()}
    paths = {}
    for p, item in doc["paths"].items():  # the last run's operation paths go
        kept = {m: x for m, x in item.items() if not x.get("operationId", "").startswith("op_")}
        if kept:
            paths[p] = kept
    for method, path, flags, name in routes():
        entry = paths.get(path, {}).get(method.lower())
        if entry is None:
            entry = paths.setdefault(path, {})[method.lower()] = {
                "operationId": name.replace(".", "_") + "_" + method.lower(),
                "summary": ops[name]["summary"].split(". ")[0].rstrip("."),
                "tags": ["memories"],
                "parameters": [{"$ref": "#/components/parameters/" + c}
                               for c in re.findall(r"\{(\w+)\}", path)],
                "responses": dict({"200": {"description": "the answer of " + name,
                                           "content": {"application/json": {"schema": {"type": "object"}}}}},
                                  **errors())}
        entry["x-operation"] = name
        req = route_request(ops[name], method, path, flags)
        keep = [p for p in entry.get("parameters", []) if p.get("in") != "query"]
        if "query" in req:
            entry["parameters"] = keep + req["query"]
        else:
            entry["parameters"] = keep
            entry["requestBody"] = {"required": "RF_BODY_OPTIONAL" not in flags,
                                    "content": {"application/json": {"schema": req["body"]}}}
        if not entry["parameters"]:
            del entry["parameters"]
    for name, op in ops.items():
        item = paths.setdefault("/v1/" + name.replace(".", "/"), {})
        if "post" not in item:  # POST /v1/recall is a route of its own, naming recall
            item.update(op_path(op))
    doc["paths"] = paths
    doc["openapi"] = "3.1.0"
    return doc


def main():
    doc = json.load(open(DOC))
    text = json.dumps(build(doc), indent=2, ensure_ascii=False) + "\n"
    if "--check" in sys.argv:
        same = open(DOC).read() == text
        print("docs/openapi.json is %s" % ("current" if same else "out of date: run tools/gen_openapi.py"))
        sys.exit(0 if same else 1)
    open(DOC, "w").write(text)
    # The TypeScript client's types come from this document
    # (bindings/typescript/scripts/generate.mjs): written again with it
    # when node is here (tests/e2e/typescript_client.sh checks them).
    gen = os.path.join(root, "bindings", "typescript", "scripts", "generate.mjs")
    if shutil.which("node") and os.path.exists(gen):
        subprocess.run(["node", gen], check=True)


if __name__ == "__main__":
    main()
