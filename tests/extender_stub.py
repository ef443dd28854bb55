#!/usr/bin/env python3
"""Deterministic stub of a kube-scheduler HTTP extender (stdlib only).

Used to produce and to replay the extender conformance vectors (conformance-sample/extenders/): every reply is a pure function of
the behaviour spec and the request body, so the real kube-scheduler and a re-implementation see
exactly the same extender.

CLI:
    stub_extender.py --port N --behaviour NAME_OR_JSON_OR_FILE [--record FILE] [--host 127.0.0.1]
    --port 0 picks a free port; the first stdout line is then "PORT=<n>" (flushed). Nothing else is
    printed. SIGTERM / SIGINT stop it cleanly (exit 0). --record writes one JSON line per request
    (see `summarize_request`), for debugging only.

Library (what tools and checkers use):
    with StubPool(specs) as pool:            # specs = scenario["extenders"] (list of {"behaviour": ...})
        cfg = substitute(config, pool.ports)  # "{port0}" -> actual port, in every string
        ...run the scheduler...
        out = unsubstitute(out, pool.ports)   # actual port -> "{port0}" in every string
        pool.requests(k)                      # summaries of what stub k received

Behaviour spec (a JSON object; a bare string names one of BEHAVIOURS):
    "verbs":   {"<last path segment>": "filter"|"prioritize"|"bind"|"preempt"}  (added to the
               identity map filter/prioritize/bind/preempt; any other path answers 404)
    "filter":  {"fail": RULE, "unresolvable": RULE, "both": RULE, "drop": RULE, "keep_failed": RULE,
                "reason": TEMPLATE, "unresolvable_reason": TEMPLATE,
                "reply": "auto"|"names"|"nodes"|"none"|"empty_names",
                "extra_names": [..], "error": "text for the Error field"}
        fail         -> in FailedNodes, removed from the result
        unresolvable -> in FailedAndUnresolvableNodes, removed
        both         -> in both maps, removed
        drop         -> removed, in no map
        keep_failed  -> in FailedNodes but still returned as passing
        TEMPLATE     -> str.format with {node}; default "node(s) rejected by stub extender"
        reply auto   -> NodeNames when the request carried NodeNames, else Nodes (node objects
                        echoed as received); "none" -> neither key (null); "empty_names" -> NodeNames: []
        extra_names  -> appended to the returned NodeNames, or as minimal node objects
                        ({"metadata": {"name": n}}) to the returned Nodes
        extra_failed / extra_unresolvable -> {"node": "reason"} added to the maps as given (nodes the
                        extender was not sent, e.g. already rejected by a Filter plugin)
    "prioritize": {"scores": {"node": int}, "label": "key" (int value of that node label),
                   "name_suffix": true (trailing digits of the name), "default": int,
                   "modulo": int (score %= modulo), "omit": RULE, "extra": [{"Host":..,"Score":..}]}
                  precedence: scores > label > name_suffix > default (0)
    "preempt": {"drop": RULE (nodes removed from the candidate map), "empty": RULE (node kept with
                no victims), "unknown_uid": RULE (victim UID replaced by "no-such-uid")}
               otherwise pass-through: returns NodeNameToMetaVictims built from the request
               (from NodeNameToMetaVictims, or the UIDs of NodeNameToVictims pods)
    "bind":    {"error": "text"}  (Error field of the bind reply; records every bind request)
    "faults":  {"<action or *>": {"kind": "http500"|"status"|"malformed"|"empty_body"|"slow"|"close",
                                  "status": int, "delay": seconds, "body": "text"}}
               slow: waits `delay` (default 3 s, interruptible) then answers normally
    "node_labels": {"node": {labels}}  labels for RULE/label scoring when the request only has NodeNames
RULE: {"names": [..], "prefix": "p", "suffix": "s", "regex": "re", "label": {"k": "v"},
       "label_exists": "k", "all": true}; a node matches when any given criterion matches.
"""
# A verbatim copy of the shared deterministic stub (test tooling): keep it identical, lint aside.
# ruff: noqa
from __future__ import annotations

import argparse
import json
import os
import re
import signal
import socket
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

DEFAULT_REASON = "node(s) rejected by stub extender"

# Named behaviours (the vectors embed full specs; these are conveniences for the CLI).
BEHAVIOURS: dict[str, dict] = {
    "pass": {},
    "fail-odd": {"filter": {"fail": {"regex": r"[13579]$"}}},
    "fail-all": {"filter": {"fail": {"all": True}}},
    "unresolvable-all": {"filter": {"unresolvable": {"all": True}}},
    "score-suffix": {"prioritize": {"name_suffix": True, "modulo": 11}},
    "http500": {"faults": {"*": {"kind": "http500"}}},
    "malformed": {"faults": {"*": {"kind": "malformed"}}},
    "slow": {"faults": {"*": {"kind": "slow", "delay": 3}}},
    "error-field": {"filter": {"error": "stub extender refuses"}},
    "bind-ok": {},
    "bind-error": {"bind": {"error": "stub bind refused"}},
}


def load_spec(b) -> dict:
    if b is None:
        return {}
    if isinstance(b, dict):
        return b
    if isinstance(b, str):
        if b in BEHAVIOURS:
            return BEHAVIOURS[b]
        if b.lstrip().startswith("{"):
            return json.loads(b)
        if os.path.exists(b):
            with open(b) as f:
                return json.load(f)
    raise ValueError(f"unknown behaviour {b!r}")


def _labels(spec: dict, name: str, node: dict | None) -> dict:
    if node is not None:
        return (node.get("metadata") or {}).get("labels") or {}
    return (spec.get("node_labels") or {}).get(name) or {}


def matches(rule, spec: dict, name: str, node: dict | None) -> bool:
    if not rule:
        return False
    if rule.get("all"):
        return True
    if name in (rule.get("names") or []):
        return True
    if rule.get("prefix") and name.startswith(rule["prefix"]):
        return True
    if rule.get("suffix") and name.endswith(rule["suffix"]):
        return True
    if rule.get("regex") and re.search(rule["regex"], name):
        return True
    labels = _labels(spec, name, node)
    if rule.get("label") and all(labels.get(k) == v for k, v in rule["label"].items()):
        return True
    if rule.get("label_exists") and rule["label_exists"] in labels:
        return True
    return False


def _input_nodes(args: dict):
    """[(name, node_obj_or_None)] in request order, and whether the request used NodeNames."""
    names = args.get("NodeNames")
    nodes = args.get("Nodes")
    if names is not None:
        return [(n, None) for n in names], True
    items = (nodes or {}).get("items") or []
    return [((it.get("metadata") or {}).get("name", ""), it) for it in items], False


def do_filter(spec: dict, args: dict) -> dict:
    f = spec.get("filter") or {}
    if f.get("error"):
        return {"Nodes": None, "NodeNames": None, "FailedNodes": {}, "FailedAndUnresolvableNodes": {}, "Error": f["error"]}
    inp, by_names = _input_nodes(args)
    reason = f.get("reason", DEFAULT_REASON)
    ureason = f.get("unresolvable_reason", reason)
    failed, unres, keep = {}, {}, []
    for name, node in inp:
        if matches(f.get("both"), spec, name, node):
            failed[name] = reason.format(node=name)
            unres[name] = ureason.format(node=name)
        elif matches(f.get("unresolvable"), spec, name, node):
            unres[name] = ureason.format(node=name)
        elif matches(f.get("fail"), spec, name, node):
            failed[name] = reason.format(node=name)
        elif matches(f.get("drop"), spec, name, node):
            pass
        elif matches(f.get("keep_failed"), spec, name, node):
            failed[name] = reason.format(node=name)
            keep.append((name, node))
        else:
            keep.append((name, node))
    for name, msg in (f.get("extra_failed") or {}).items():
        failed[name] = msg
    for name, msg in (f.get("extra_unresolvable") or {}).items():
        unres[name] = msg
    mode = f.get("reply", "auto")
    if mode == "auto":
        mode = "names" if by_names else "nodes"
    out = {"Nodes": None, "NodeNames": None, "FailedNodes": failed, "FailedAndUnresolvableNodes": unres, "Error": ""}
    if mode == "names":
        out["NodeNames"] = [n for n, _ in keep] + list(f.get("extra_names") or [])
    elif mode == "nodes":
        if by_names:
            items = [{"metadata": {"name": n}} for n, _ in keep]
        else:
            items = [nd for _, nd in keep]
        items += [{"metadata": {"name": n}} for n in f.get("extra_names") or []]
        out["Nodes"] = {"metadata": {}, "items": items}
    elif mode == "empty_names":
        out["NodeNames"] = []
    # "none": both null
    return out


def do_prioritize(spec: dict, args: dict) -> list:
    p = spec.get("prioritize") or {}
    inp, _ = _input_nodes(args)
    res = []
    for name, node in inp:
        if matches(p.get("omit"), spec, name, node):
            continue
        if name in (p.get("scores") or {}):
            s = int(p["scores"][name])
        elif p.get("label") and p["label"] in _labels(spec, name, node):
            s = int(_labels(spec, name, node)[p["label"]])
        elif p.get("name_suffix") and re.search(r"(\d+)$", name):
            s = int(re.search(r"(\d+)$", name).group(1))
        else:
            s = int(p.get("default", 0))
        if p.get("modulo"):
            s %= int(p["modulo"])
        res.append({"Host": name, "Score": s})
    res.extend(p.get("extra") or [])
    return res


def do_preempt(spec: dict, args: dict) -> dict:
    p = spec.get("preempt") or {}
    meta = {}
    if args.get("NodeNameToMetaVictims") is not None:
        for node, v in args["NodeNameToMetaVictims"].items():
            meta[node] = {"Pods": [{"UID": x.get("UID", "")} for x in (v or {}).get("Pods") or []],
                          "NumPDBViolations": (v or {}).get("NumPDBViolations", 0)}
    elif args.get("NodeNameToVictims") is not None:
        for node, v in args["NodeNameToVictims"].items():
            meta[node] = {"Pods": [{"UID": (x.get("metadata") or {}).get("uid", "")} for x in (v or {}).get("Pods") or []],
                          "NumPDBViolations": (v or {}).get("NumPDBViolations", 0)}
    out = {}
    for node in sorted(meta):
        if matches(p.get("drop"), spec, node, None):
            continue
        v = meta[node]
        if matches(p.get("empty"), spec, node, None):
            v = {"Pods": [], "NumPDBViolations": 0}
        if matches(p.get("unknown_uid"), spec, node, None):
            v = {"Pods": [{"UID": "no-such-uid"}], "NumPDBViolations": v["NumPDBViolations"]}
        out[node] = v
    return {"NodeNameToMetaVictims": out}


def do_bind(spec: dict, args: dict) -> dict:
    return {"Error": (spec.get("bind") or {}).get("error", "")}


ACTIONS = {"filter": do_filter, "prioritize": do_prioritize, "preempt": do_preempt, "bind": do_bind}


def summarize_request(action: str, path: str, args) -> dict:
    """What the stub records per request (node names in request order; null vs set keys)."""
    s = {"path": path, "action": action}
    if not isinstance(args, dict):
        return s
    if "Pod" in args and isinstance(args.get("Pod"), dict):
        md = args["Pod"].get("metadata") or {}
        s["pod"] = f'{md.get("namespace", "")}/{md.get("name", "")}'
    if action in ("filter", "prioritize"):
        s["NodeNames"] = args.get("NodeNames")
        nodes = args.get("Nodes")
        s["Nodes"] = None if nodes is None else [(it.get("metadata") or {}).get("name") for it in nodes.get("items") or []]
    elif action == "preempt":
        for k in ("NodeNameToVictims", "NodeNameToMetaVictims"):
            v = args.get(k)
            if v is None:
                s[k] = None
            elif k == "NodeNameToVictims":
                s[k] = {n: sorted((p.get("metadata") or {}).get("uid", "") for p in (x or {}).get("Pods") or []) for n, x in v.items()}
            else:
                s[k] = {n: sorted(p.get("UID", "") for p in (x or {}).get("Pods") or []) for n, x in v.items()}
    elif action == "bind":
        s.update({k: args.get(k) for k in ("PodName", "PodNamespace", "PodUID", "Node")})
    return s


class StubServer:
    def __init__(self, spec, port: int = 0, host: str = "127.0.0.1", record=None):
        self.spec = load_spec(spec)
        self.stop_event = threading.Event()
        self.log: list[dict] = []
        self.lock = threading.Lock()
        self.record = record
        stub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.0"

            def log_message(self, *a):  # silence
                pass

            def _send(self, code: int, body: bytes, ctype="application/json"):
                try:
                    self.send_response(code)
                    self.send_header("Content-Type", ctype)
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError, OSError):
                    pass

            def do_GET(self):
                self._send(405, b"method not allowed", "text/plain")

            def do_POST(self):
                try:
                    n = int(self.headers.get("Content-Length") or 0)
                    raw = self.rfile.read(n) if n else b""
                except OSError:
                    return
                seg = self.path.rstrip("/").rsplit("/", 1)[-1]
                verbs = {a: a for a in ACTIONS}
                verbs.update(stub.spec.get("verbs") or {})
                action = verbs.get(seg)
                try:
                    args = json.loads(raw.decode() or "null")
                except ValueError:
                    args = None
                stub._note(summarize_request(action or "?", self.path, args))
                if action is None:
                    self._send(404, b"404 page not found\n", "text/plain")
                    return
                faults = stub.spec.get("faults") or {}
                fault = faults.get(action) or faults.get("*")
                if fault:
                    kind = fault.get("kind")
                    if kind == "http500":
                        self._send(500, fault.get("body", "stub internal error").encode(), "text/plain")
                        return
                    if kind == "status":
                        self._send(int(fault.get("status", 503)), fault.get("body", "").encode(), "text/plain")
                        return
                    if kind == "malformed":
                        self._send(200, fault.get("body", '{"Nodes": [this is not json').encode())
                        return
                    if kind == "empty_body":
                        self._send(200, b"")
                        return
                    if kind == "close":
                        try:
                            self.connection.shutdown(socket.SHUT_RDWR)
                        except OSError:
                            pass
                        return
                    if kind == "slow":
                        if stub.stop_event.wait(float(fault.get("delay", 3))):
                            return
                if not isinstance(args, dict):
                    self._send(400, b"bad request", "text/plain")
                    return
                result = ACTIONS[action](stub.spec, args)
                self._send(200, json.dumps(result, sort_keys=True).encode())

        class Server(ThreadingHTTPServer):
            daemon_threads = True
            allow_reuse_address = True

        self.httpd = Server((host, port), Handler)
        self.port = self.httpd.server_address[1]
        self.thread = None

    def _note(self, s: dict):
        with self.lock:
            self.log.append(s)
            if self.record:
                with open(self.record, "a") as f:
                    f.write(json.dumps(s, sort_keys=True) + "\n")

    def start(self):
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()
        return self

    def stop(self):
        self.stop_event.set()
        self.httpd.shutdown()
        self.httpd.server_close()


def reserve_closed_port(host="127.0.0.1"):
    """(socket, port): a bound but not listening TCP socket, so connections are refused and the port
    cannot be handed to another server while the socket is held (for 'unreachable' extenders)."""
    s = socket.socket()
    s.bind((host, 0))
    return s, s.getsockname()[1]


class StubPool:
    """Starts one stub per entry of scenario["extenders"]; {"behaviour": "unreachable"} starts none
    and reserves a closed port instead."""

    def __init__(self, entries):
        self.entries = list(entries or [])
        self.servers: list[StubServer | None] = []
        self.ports: list[int] = []
        self.held: list[socket.socket] = []

    def __enter__(self):
        for e in self.entries:
            b = e.get("behaviour") if isinstance(e, dict) else e
            if b == "unreachable":
                sock, port = reserve_closed_port()
                self.held.append(sock)
                self.servers.append(None)
                self.ports.append(port)
            else:
                s = StubServer(b).start()
                self.servers.append(s)
                self.ports.append(s.port)
        return self

    def requests(self, k: int) -> list:
        s = self.servers[k]
        return [] if s is None else list(s.log)

    def __exit__(self, *exc):
        for s in self.servers:
            if s is not None:
                s.stop()
        for sock in self.held:
            sock.close()


def substitute(obj, ports):
    """Replace "{portK}" by the K-th actual port in every string of obj (returns a copy)."""
    if isinstance(obj, str):
        for k, p in enumerate(ports):
            obj = obj.replace("{port%d}" % k, str(p))
        return obj
    if isinstance(obj, list):
        return [substitute(x, ports) for x in obj]
    if isinstance(obj, dict):
        return {substitute(k, ports): substitute(v, ports) for k, v in obj.items()}
    return obj


def unsubstitute(obj, ports):
    """Inverse of substitute: "127.0.0.1:<port>" -> "127.0.0.1:{portK}" in every string (keys too)."""
    if isinstance(obj, str):
        for k, p in enumerate(ports):
            obj = re.sub(r"127\.0\.0\.1:%d(?!\d)" % p, "127.0.0.1:{port%d}" % k, obj)
        return obj
    if isinstance(obj, list):
        return [unsubstitute(x, ports) for x in obj]
    if isinstance(obj, dict):
        return {unsubstitute(k, ports): unsubstitute(v, ports) for k, v in obj.items()}
    return obj


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--behaviour", "--behavior", default="pass", help="name, JSON object, or JSON file")
    ap.add_argument("--record", default=None)
    a = ap.parse_args(argv)
    srv = StubServer(a.behaviour, a.port, a.host, a.record)
    done = threading.Event()

    def _stop(*_):
        done.set()

    signal.signal(signal.SIGTERM, _stop)
    signal.signal(signal.SIGINT, _stop)
    srv.start()
    if a.port == 0:
        print(f"PORT={srv.port}", flush=True)
    while not done.wait(0.2):
        pass
    srv.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
