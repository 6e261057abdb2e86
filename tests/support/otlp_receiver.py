#!/usr/bin/env python3
"""otlp_receiver.py: a stand-in OTLP/HTTP collector for remem's telemetry
tests (docs/telemetry.md). No real collector runs in the test suite, so this
one checks what a collector would refuse: each POST to /v1/traces or
/v1/metrics must be JSON with the OTLP JSON mapping's required fields
(resourceSpans[].scopeSpans[].spans[] with traceId 32 hex digits, spanId 16,
name, kind, startTimeUnixNano/endTimeUnixNano as decimal strings, attributes
as {key, value:{stringValue|intValue (a decimal string)|doubleValue|
boolValue}}; resourceMetrics[].scopeMetrics[].metrics[] with a name and one
of sum/gauge/histogram whose dataPoints carry their times as strings).

A good payload gets 200 {}; a bad one 400 with the problems, and is
counted. Every request, good or bad, is one line of the JSONL file:
{"path", "ok", "problems", "body"}. GET /stats answers {"good", "bad"}.

    otlp_receiver.py --port-file F --out F.jsonl     (python3 stdlib only)
The port is a free loopback port, written to the port file once listening.
"""
import argparse
import json
import re
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

HEX32 = re.compile(r"^[0-9a-f]{32}$")
HEX16 = re.compile(r"^[0-9a-f]{16}$")
UINT = re.compile(r"^[0-9]+$")
INT = re.compile(r"^-?[0-9]+$")


def check_value(v, where, out):
    if not isinstance(v, dict) or len(v) != 1:
        out.append(f"{where}: value must be an object with one key")
        return
    (k, x), = v.items()
    if k == "stringValue":
        ok = isinstance(x, str)
    elif k == "intValue":
        ok = isinstance(x, str) and INT.match(x) is not None
    elif k == "doubleValue":
        ok = isinstance(x, (int, float)) and not isinstance(x, bool)
    elif k == "boolValue":
        ok = isinstance(x, bool)
    else:
        ok = False
    if not ok:
        out.append(f"{where}: bad {k}: {x!r}")


def check_attrs(attrs, where, out):
    if attrs is None:
        return
    if not isinstance(attrs, list):
        out.append(f"{where}.attributes: not a list")
        return
    seen = set()
    for i, a in enumerate(attrs):
        w = f"{where}.attributes[{i}]"
        if not isinstance(a, dict) or not isinstance(a.get("key"), str) or not a["key"]:
            out.append(f"{w}: no key")
            continue
        if a["key"] in seen:
            out.append(f"{w}: key {a['key']} repeated")
        seen.add(a["key"])
        if "value" not in a:
            out.append(f"{w}: no value")
        else:
            check_value(a["value"], w, out)


def check_resource(r, where, out):
    if not isinstance(r, dict):
        out.append(f"{where}.resource: missing")
        return
    check_attrs(r.get("attributes"), where + ".resource", out)


def check_traces(body, out):
    rs = body.get("resourceSpans")
    if not isinstance(rs, list) or not rs:
        out.append("resourceSpans: missing or empty")
        return
    for i, r in enumerate(rs):
        w = f"resourceSpans[{i}]"
        check_resource(r.get("resource"), w, out)
        ss = r.get("scopeSpans")
        if not isinstance(ss, list):
            out.append(f"{w}.scopeSpans: missing")
            continue
        for j, s in enumerate(ss):
            spans = s.get("spans")
            if not isinstance(spans, list):
                out.append(f"{w}.scopeSpans[{j}].spans: missing")
                continue
            for k, sp in enumerate(spans):
                ws = f"{w}.scopeSpans[{j}].spans[{k}]"
                if not HEX32.match(str(sp.get("traceId", ""))) or sp["traceId"] == "0" * 32:
                    out.append(f"{ws}.traceId: not 32 hex digits")
                if not HEX16.match(str(sp.get("spanId", ""))) or sp["spanId"] == "0" * 16:
                    out.append(f"{ws}.spanId: not 16 hex digits")
                if "parentSpanId" in sp and sp["parentSpanId"] and not HEX16.match(
                        str(sp["parentSpanId"])):
                    out.append(f"{ws}.parentSpanId: not 16 hex digits")
                if not isinstance(sp.get("name"), str) or not sp["name"]:
                    out.append(f"{ws}.name: missing")
                if not isinstance(sp.get("kind"), int) or not 0 <= sp["kind"] <= 5:
                    out.append(f"{ws}.kind: not a SpanKind number")
                for t in ("startTimeUnixNano", "endTimeUnixNano"):
                    if not isinstance(sp.get(t), str) or not UINT.match(sp[t]):
                        out.append(f"{ws}.{t}: not a decimal string")
                if (isinstance(sp.get("startTimeUnixNano"), str)
                        and isinstance(sp.get("endTimeUnixNano"), str)
                        and UINT.match(sp["startTimeUnixNano"]) and UINT.match(sp["endTimeUnixNano"])
                        and int(sp["endTimeUnixNano"]) < int(sp["startTimeUnixNano"])):
                    out.append(f"{ws}: ends before it starts")
                check_attrs(sp.get("attributes"), ws, out)
                st = sp.get("status")
                if st is not None and (not isinstance(st, dict) or st.get("code", 0) not in (0, 1, 2)):
                    out.append(f"{ws}.status: bad code")


def check_points(points, where, hist, out):
    if not isinstance(points, list) or not points:
        out.append(f"{where}.dataPoints: missing")
        return
    for i, p in enumerate(points):
        w = f"{where}.dataPoints[{i}]"
        if not isinstance(p.get("timeUnixNano"), str) or not UINT.match(p["timeUnixNano"]):
            out.append(f"{w}.timeUnixNano: not a decimal string")
        check_attrs(p.get("attributes"), w, out)
        if hist:
            if not isinstance(p.get("count"), str) or not UINT.match(p["count"]):
                out.append(f"{w}.count: not a decimal string")
            b, e = p.get("bucketCounts", []), p.get("explicitBounds", [])
            if not isinstance(b, list) or not all(isinstance(x, str) and UINT.match(x) for x in b):
                out.append(f"{w}.bucketCounts: not decimal strings")
            elif b and len(b) != len(e) + 1:
                out.append(f"{w}: bucketCounts must be one longer than explicitBounds")
        elif not (isinstance(p.get("asDouble"), (int, float))
                  or (isinstance(p.get("asInt"), str) and INT.match(p["asInt"]))):
            out.append(f"{w}: neither asDouble nor asInt")


def check_metrics(body, out):
    rm = body.get("resourceMetrics")
    if not isinstance(rm, list) or not rm:
        out.append("resourceMetrics: missing or empty")
        return
    for i, r in enumerate(rm):
        w = f"resourceMetrics[{i}]"
        check_resource(r.get("resource"), w, out)
        sm = r.get("scopeMetrics")
        if not isinstance(sm, list):
            out.append(f"{w}.scopeMetrics: missing")
            continue
        for j, s in enumerate(sm):
            for k, m in enumerate(s.get("metrics") or []):
                wm = f"{w}.scopeMetrics[{j}].metrics[{k}]"
                if not isinstance(m.get("name"), str) or not m["name"]:
                    out.append(f"{wm}.name: missing")
                kinds = [x for x in ("sum", "gauge", "histogram") if x in m]
                if len(kinds) != 1:
                    out.append(f"{wm}: needs exactly one of sum, gauge, histogram")
                    continue
                check_points(m[kinds[0]].get("dataPoints"), f"{wm}.{kinds[0]}",
                             kinds[0] == "histogram", out)


class Receiver(BaseHTTPRequestHandler):
    def log_message(self, *a):
        pass

    def answer(self, code, obj):
        data = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        if self.path == "/stats":
            with self.server.lock:
                self.answer(200, dict(self.server.stats))
        else:
            self.answer(404, {"error": "not found"})

    def do_POST(self):
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n)
        problems, body = [], None
        if self.path not in ("/v1/traces", "/v1/metrics"):
            self.answer(404, {"error": f"no route {self.path}"})
            return
        if not (self.headers.get("Content-Type") or "").startswith("application/json"):
            problems.append("Content-Type is not application/json")
        try:
            body = json.loads(raw)
            if not isinstance(body, dict):
                problems.append("not a JSON object")
            elif self.path == "/v1/traces":
                check_traces(body, problems)
            else:
                check_metrics(body, problems)
        except ValueError as e:
            problems.append(f"not JSON: {e}")
        ok = not problems
        rec = {"path": self.path, "ok": ok, "problems": problems, "body": body,
               "headers": {k.lower(): v for k, v in self.headers.items()}}
        with self.server.lock:
            self.server.stats["good" if ok else "bad"] += 1
            self.server.out.write(json.dumps(rec) + "\n")
            self.server.out.flush()
        if ok:
            self.answer(200, {})
        else:
            self.answer(400, {"code": 3, "message": "; ".join(problems[:5])})


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    srv = ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
    srv.lock = threading.Lock()
    srv.stats = {"good": 0, "bad": 0}
    srv.out = open(a.out, "a")
    with open(a.port_file + ".tmp", "w") as f:
        f.write(str(srv.server_address[1]))
    import os
    os.replace(a.port_file + ".tmp", a.port_file)
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
