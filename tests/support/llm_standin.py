#!/usr/bin/env python3
"""llm_standin.py: a stand-in for an OpenAI-compatible LLM server, for
remem's tests (python3 standard library only). It answers
POST .../chat/completions deterministically from a rules file, so a test
decides what "the model" says, and logs every request so a test can assert
the prompts remem sent, byte for byte. It is a test tool, never part of
the product: remem itself never fakes an answer.

Start (the port is chosen by the system; the file appears once the server
listens):
    python3 tests/support/llm_standin.py --port-file DIR/port \
        --log DIR/requests.jsonl [--rules DIR/rules.json] \
        [--default-reply TEXT] [--host 127.0.0.1] [--port 0]
then point remem at it:
    export REMEM_LLM_URL=http://127.0.0.1:$(cat DIR/port)/v1
Stop it with SIGTERM (or kill the process); tests/support/llm_standin.sh
has shell helpers (standin_start / standin_stop) and LlmStandin below does
the same from Python (`with LlmStandin(tmpdir, rules=[...]) as s:`).

The rules file is a JSON list, re-read on every request (a test may rewrite
it between calls). The first rule whose "match" is a substring of the LAST
user message (and whose "times" is not used up) answers:
    {"match": "poignancy",        substring of the last user message;
                                  "" or absent matches everything
     "reply": "{\"rating\": 7}",  the assistant's content
     "status": 200,               HTTP status; not 2xx: an error body
                                  {"error": {"message": reply or "..."}}
     "delay_ms": 0,               wait before answering (slow mode)
     "truncate": false,           true: the JSON body is cut in half
                                  (a truncated answer; the HTTP framing is
                                  correct, the body is not JSON)
     "raw": null,                 a string: sent as the whole body instead
                                  of a chat completion (garbage mode)
     "usage": {...},              replaces the computed usage object;
                                  {} or null: no "usage" key at all
     "times": 0,                  > 0: the rule answers this many requests,
                                  then is skipped (e.g. one 500, then OK)
     "format": "json_schema"}     present: only requests whose
                                  response_format.type is this (null:
                                  requests that ask for none) match
No rule matching: the default reply (--default-reply, or
'{"rating": 5, "explanation": "stand-in default"}') with status 200.

Modes the tests use, as rules:
    slow:           {"delay_ms": 3000, "reply": "..."}
    server error:   {"status": 500, "reply": "model overloaded"}
    truncated:      {"truncate": true, "reply": "..."}
    prose-wrapped:  {"reply": "Sure! Here it is:\n```json\n{...}\n```"}
    garbage:        {"raw": "<html>not an API</html>"}

Usage, when no rule gives one, is counted deterministically:
prompt_tokens = the number of whitespace-separated words in all messages,
completion_tokens = the number in the reply.

Each request is one line of the log (JSONL), written before answering:
    {"path": "/v1/chat/completions", "authorization": "Bearer k" or null,
     "body": <the request body parsed as JSON, or the raw text if it is not>,
     "rule": <index of the rule that answered, or null>}
GET .../models answers {"data": [{"id": MODEL}]} (the model of the last
request, or "stand-in").
"""
import argparse
import json
import os
import signal
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

DEFAULT_REPLY = '{"rating": 5, "explanation": "stand-in default"}'


class State:
    def __init__(self, rules_path, log_path, default_reply):
        self.rules_path = rules_path
        self.log_path = log_path
        self.default_reply = default_reply
        self.lock = threading.Lock()
        self.used = {}  # rule index -> times it answered
        self.model = "stand-in"

    def rules(self):
        if not self.rules_path or not os.path.exists(self.rules_path):
            return []
        with open(self.rules_path, encoding="utf-8") as f:
            rules = json.load(f)
        if not isinstance(rules, list):
            raise ValueError("rules file: expected a JSON list")
        return rules

    def choose(self, last_user, fmt=None):
        """The rule answering this message (index, rule) or (None, None);
        fmt is the request's response_format type (None: none asked)."""
        with self.lock:
            for i, rule in enumerate(self.rules()):
                if rule.get("match", "") not in last_user:
                    continue
                if "format" in rule and rule["format"] != fmt:
                    continue
                times = int(rule.get("times") or 0)
                if times > 0 and self.used.get(i, 0) >= times:
                    continue
                self.used[i] = self.used.get(i, 0) + 1
                return i, rule
        return None, None

    def log(self, entry):
        if not self.log_path:
            return
        line = json.dumps(entry, ensure_ascii=False) + "\n"
        with self.lock:
            with open(self.log_path, "a", encoding="utf-8") as f:
                f.write(line)
                f.flush()


def words(s):
    return len(str(s).split())


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    state = None  # set by main

    def log_message(self, fmt, *args):  # quiet: the JSONL log says enough
        pass

    def send(self, status, body, ctype="application/json"):
        data = body.encode("utf-8") if isinstance(body, str) else body
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        try:
            self.wfile.write(data)
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (a timeout test): nothing to answer

    def do_GET(self):
        if self.path.rstrip("/").endswith("/models"):
            self.send(200, json.dumps({"object": "list", "data": [
                {"id": self.state.model, "object": "model"}]}))
        else:
            self.send(404, json.dumps({"error": {"message": "no such path"}}))

    def do_POST(self):
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n).decode("utf-8", "replace")
        try:
            body = json.loads(raw)
        except ValueError:
            body = None
        messages = body.get("messages") if isinstance(body, dict) else None
        last_user = ""
        for m in messages if isinstance(messages, list) else []:
            if isinstance(m, dict) and m.get("role") == "user":
                last_user = str(m.get("content", ""))
        try:
            fmt = body.get("response_format") if isinstance(body, dict) else None
            fmt = fmt.get("type") if isinstance(fmt, dict) else None
            idx, rule = self.state.choose(last_user, fmt)
        except (OSError, ValueError) as e:
            self.state.log({"path": self.path, "body": body if body is not None else raw,
                            "authorization": self.headers.get("Authorization"),
                            "rule": None, "error": str(e)})
            self.send(500, json.dumps({"error": {"message": "stand-in: %s" % e}}))
            return
        self.state.log({"path": self.path, "body": body if body is not None else raw,
                        "authorization": self.headers.get("Authorization"),
                        "rule": idx})
        if not self.path.split("?")[0].rstrip("/").endswith("/chat/completions"):
            self.send(404, json.dumps({"error": {"message": "no such path: " + self.path}}))
            return
        if body is None or not isinstance(messages, list):
            self.send(400, json.dumps({"error": {"message": "expected a JSON body with messages"}}))
            return
        if isinstance(body.get("model"), str):
            self.state.model = body["model"]
        rule = rule or {}
        if rule.get("delay_ms"):
            time.sleep(int(rule["delay_ms"]) / 1000.0)
        reply = rule.get("reply", self.state.default_reply)
        status = int(rule.get("status") or 200)
        if rule.get("raw") is not None:
            self.send(status, str(rule["raw"]), "text/plain")
            return
        if status < 200 or status > 299:
            self.send(status, json.dumps({"error": {"message": reply or "stand-in error",
                                                    "type": "server_error"}}))
            return
        prompt = sum(words(m.get("content", "")) for m in messages if isinstance(m, dict))
        answer = {
            "id": "chatcmpl-standin-%d" % (idx if idx is not None else -1),
            "object": "chat.completion",
            "created": 0,
            "model": body.get("model") or "stand-in",
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": reply}}],
        }
        if "usage" in rule:
            if rule["usage"]:
                answer["usage"] = rule["usage"]
        else:
            answer["usage"] = {"prompt_tokens": prompt, "completion_tokens": words(reply),
                               "total_tokens": prompt + words(reply)}
        text = json.dumps(answer)
        if rule.get("truncate"):
            text = text[: len(text) // 2]
        self.send(status, text)


class LlmStandin:
    """Runs the stand-in as a child process for a Python test:
        with LlmStandin(tmpdir, rules=[{"match": "x", "reply": "7"}]) as s:
            env["REMEM_LLM_URL"] = s.url
            ... s.requests() ...
    set_rules() rewrites the rules file (read again on every request)."""

    def __init__(self, tmpdir, rules=None, default_reply=None):
        self.dir = tmpdir
        self.rules_path = os.path.join(tmpdir, "llm_rules.json")
        self.log_path = os.path.join(tmpdir, "llm_requests.jsonl")
        self.port_path = os.path.join(tmpdir, "llm_port")
        self.set_rules(rules or [])
        cmd = [sys.executable, os.path.abspath(__file__), "--port-file", self.port_path,
               "--log", self.log_path, "--rules", self.rules_path]
        if default_reply is not None:
            cmd += ["--default-reply", default_reply]
        self.proc = subprocess.Popen(cmd)
        deadline = time.time() + 20
        while not os.path.exists(self.port_path):
            if time.time() > deadline or self.proc.poll() is not None:
                raise RuntimeError("the LLM stand-in did not start")
            time.sleep(0.02)
        with open(self.port_path) as f:
            self.port = int(f.read())
        self.url = "http://127.0.0.1:%d/v1" % self.port

    def set_rules(self, rules):
        tmp = self.rules_path + ".tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(rules, f)
        os.replace(tmp, self.rules_path)

    def requests(self):
        if not os.path.exists(self.log_path):
            return []
        with open(self.log_path, encoding="utf-8") as f:
            return [json.loads(line) for line in f if line.strip()]

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(10)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--rules")
    ap.add_argument("--log")
    ap.add_argument("--default-reply", default=DEFAULT_REPLY)
    a = ap.parse_args()
    Handler.state = State(a.rules, a.log, a.default_reply)
    srv = ThreadingHTTPServer((a.host, a.port), Handler)
    srv.daemon_threads = True
    signal.signal(signal.SIGTERM, lambda *_: threading.Thread(target=srv.shutdown).start())
    tmp = a.port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write(str(srv.server_address[1]))
    os.replace(tmp, a.port_file)  # appears whole, only once we listen
    try:
        srv.serve_forever()
    finally:
        srv.server_close()


if __name__ == "__main__":
    main()
