#!/usr/bin/env python3
"""Report generator of the Authrim load-testing suite (Python 3 standard library only).

    python3 load-testing/report.py --out DIR RUN [RUN ...]

Each RUN is a directory holding `run.json`, `summary.json` (the k6 handleSummary data) and
`metrics-before.txt` / `metrics-after.txt` (the server's /metrics around the k6 run). A
directory without run.json whose subdirectories hold run.json is expanded into those runs.

Writes DIR/report.md, in the shape of the reference (Cloudflare) load-test reports, with the
server's /metrics standing where they used Cloudflare analytics, and DIR/latency.svg (client
p95/p99 against target RPS), then prints the report's path. Missing inputs show as "-", never a crash.
"""
from __future__ import annotations

import argparse
import datetime as _dt
import json
import math
import os
import re
import sys
from dataclasses import dataclass, field
from typing import Callable, Iterable
from xml.sax.saxutils import escape as _xml_escape

INF = float("inf")

# Server labels of each scenario's requests (CONTRACT.md).
SCENARIO_LABELS: dict[str, tuple[str, str]] = {
    "token-exchange": ("token", "urn:ietf:params:oauth:grant-type:token-exchange"),
    "refresh-rotation": ("token", "refresh_token"),
    "authorization-code": ("token", "authorization_code"),
    "userinfo": ("userinfo", ""),
    "silent-auth": ("authorize", ""),
    "introspection": ("introspect", ""),
}
SCENARIO_TITLES = {
    "token-exchange": ("Token Exchange (RFC 8693)", "Token Endpoint (`POST /token`, `grant_type=urn:ietf:params:oauth:grant-type:token-exchange`)"),
    "refresh-rotation": ("Refresh Token Rotation", "Token Endpoint (`POST /token`, `grant_type=refresh_token`)"),
    "authorization-code": ("Authorization Code", "Token Endpoint (`POST /token`, `grant_type=authorization_code`)"),
    "userinfo": ("UserInfo Endpoint", "UserInfo Endpoint (`GET /userinfo`)"),
    "silent-auth": ("Silent Authentication", "Authorization Endpoint (`GET /authorize?prompt=none`)"),
    "introspection": ("Token Introspection (RFC 7662)", "Introspection Endpoint (`POST /introspect`)"),
}
# Endpoints that are never load (scrapes, seeding, health checks).
NON_LOAD_ENDPOINTS = {"metrics", "test", "healthz", "admin"}
STORE_ORDER = ["AuthorizationCodeStore", "SessionStore", "ChallengeStore", "TokenRevocationStore", "RefreshTokenRotator"]
# Keys of run.json "shards" are free-form: store names, config keys or env var names.
SHARD_KEY_HINTS = {
    "AuthorizationCodeStore": ("authorizationcode", "code"),
    "SessionStore": ("session",),
    "ChallengeStore": ("challenge",),
    "TokenRevocationStore": ("revocation", "revoke"),
    "RefreshTokenRotator": ("refresh", "rotator"),
}
QUANTILES = [(0.5, "P50"), (0.75, "P75"), (0.9, "P90"), (0.99, "P99"), (0.999, "P999")]

CLIENT_P95_LIMIT_MS = 300.0
STORE_P99_LIMIT_MS = 500.0
RECOMMENDED_SUCCESS = 0.999
RECOMMENDED_ACHIEVEMENT = 0.95
PEAK_SUCCESS = 0.99
PEAK_ACHIEVEMENT = 0.90

M_DURATION = "authrim_http_request_duration_seconds"
M_CPU = "authrim_http_request_cpu_seconds"
M_STORE = "authrim_store_operation_seconds"
M_DURABLE = "authrim_store_durable_write_seconds"
M_ENTRIES = "authrim_store_entries"
M_ERRORS = "authrim_oauth_errors"
M_DB = {"reads": "authrim_db_reads", "writes": "authrim_db_writes", "commits": "authrim_db_commits"}


# --------------------------------------------------------------------------------------------
# Prometheus text exposition
# --------------------------------------------------------------------------------------------

Labels = tuple  # sorted tuple of (name, value) pairs
SampleKey = tuple  # (metric name, Labels)

_NAME_RE = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")
_LABEL_NAME_RE = re.compile(r"\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*=\s*\"")


def _parse_labels(line: str, pos: int) -> tuple[dict[str, str], int]:
    """Parse `{a="x",b="y"}` starting at line[pos] == '{'; return labels and the index after '}'."""
    labels: dict[str, str] = {}
    pos += 1
    while True:
        while pos < len(line) and line[pos] in " \t,":
            pos += 1
        if pos >= len(line):
            raise ValueError("unterminated label set")
        if line[pos] == "}":
            return labels, pos + 1
        m = _LABEL_NAME_RE.match(line, pos)
        if not m:
            raise ValueError(f"bad label at {pos}")
        name = m.group(1)
        pos = m.end()
        value = []
        while True:
            if pos >= len(line):
                raise ValueError("unterminated label value")
            ch = line[pos]
            if ch == "\\" and pos + 1 < len(line):
                nxt = line[pos + 1]
                value.append({"n": "\n", "\\": "\\", '"': '"'}.get(nxt, "\\" + nxt))
                pos += 2
                continue
            if ch == '"':
                pos += 1
                break
            value.append(ch)
            pos += 1
        labels[name] = "".join(value)


def parse_prometheus(text: str) -> dict[SampleKey, float]:
    """Samples of a Prometheus/OpenMetrics text page: {(name, sorted label pairs): value}.

    Labels may come in any order (prometheus-client writes `le` first). Comments, `_created`
    samples, timestamps and exemplars are ignored; malformed lines are skipped."""
    samples: dict[SampleKey, float] = {}
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        m = _NAME_RE.match(line)
        if not m:
            continue
        name = m.group(0)
        pos = m.end()
        labels: dict[str, str] = {}
        try:
            if pos < len(line) and line[pos] == "{":
                labels, pos = _parse_labels(line, pos)
            rest = line[pos:].split("#", 1)[0].split()
            if not rest:
                continue
            value = float(rest[0])
        except ValueError:
            continue
        if name.endswith("_created"):
            continue
        samples[(name, tuple(sorted(labels.items())))] = value
    return samples


def _series_id(name: str, labels: Labels) -> tuple:
    for suffix in ("_bucket", "_count", "_sum", "_total"):
        if name.endswith(suffix):
            name = name[: -len(suffix)]
            break
    return name, tuple(kv for kv in labels if kv[0] != "le")


def diff_samples(before: dict[SampleKey, float], after: dict[SampleKey, float]) -> dict[SampleKey, float]:
    """after − before for cumulative samples. A series (a histogram with all its buckets, or a
    counter) that went down was reset (server restart): its after values are taken whole."""
    diff: dict[SampleKey, float] = {}
    reset: set[tuple] = set()
    for key, value in after.items():
        d = value - before.get(key, 0.0)
        if d < 0:
            reset.add(_series_id(*key))
        diff[key] = d
    for key in diff:
        if _series_id(*key) in reset:
            diff[key] = after[key]
    return diff


@dataclass
class Histogram:
    buckets: list[tuple[float, float]]  # (upper bound, cumulative count), sorted, ends with +Inf
    sum: float
    count: float

    def quantile(self, q: float) -> float | None:
        return histogram_quantile(q, self.buckets)


def histogram_quantile(q: float, buckets: list[tuple[float, float]]) -> float | None:
    """Prometheus' histogram_quantile: linear interpolation inside the bucket holding the rank;
    the lowest bucket starts at 0 (if its bound is positive); a rank in +Inf returns the highest
    finite bound. None when there are no observations or no +Inf bucket."""
    if not buckets:
        return None
    buckets = sorted(buckets)
    if buckets[-1][0] != INF or len(buckets) < 2:
        return None
    # Cumulative counts must not decrease (they can, slightly, when scraped mid-update).
    fixed, top = [], 0.0
    for ub, c in buckets:
        top = max(top, c)
        fixed.append((ub, top))
    buckets = fixed
    total = buckets[-1][1]
    if total <= 0 or math.isnan(q):
        return None
    if q < 0:
        return -INF
    if q > 1:
        return INF
    rank = q * total
    b = next((i for i in range(len(buckets) - 1) if buckets[i][1] >= rank), len(buckets) - 1)
    if b == len(buckets) - 1:
        return buckets[-2][0]
    if b == 0 and buckets[0][0] <= 0:
        return buckets[0][0]
    start = 0.0 if b == 0 else buckets[b - 1][0]
    end = buckets[b][0]
    prev = 0.0 if b == 0 else buckets[b - 1][1]
    count = buckets[b][1] - prev
    if count <= 0:
        return start
    return start + (end - start) * ((rank - prev) / count)


def collect_histogram(samples: dict[SampleKey, float], base: str, match: Callable[[dict], bool]) -> Histogram | None:
    """Sum the histogram series of `base` whose labels satisfy `match` (bucket layouts may
    differ: each series contributes its cumulative count at its largest bound <= each bound)."""
    series: dict[Labels, dict[float, float]] = {}
    sums: dict[Labels, float] = {}
    counts: dict[Labels, float] = {}
    for (name, labels), value in samples.items():
        if name not in (base + "_bucket", base + "_sum", base + "_count"):
            continue
        d = dict(labels)
        le = d.pop("le", None)
        if not match(d):
            continue
        sid = tuple(sorted(d.items()))
        if name.endswith("_bucket"):
            if le is None:
                continue
            try:
                ub = float(le)
            except ValueError:
                continue
            series.setdefault(sid, {})[ub] = value
        elif name.endswith("_sum"):
            sums[sid] = value
        else:
            counts[sid] = value
    if not series and not counts:
        return None
    for sid, bk in series.items():
        if INF not in bk:
            bk[INF] = max(counts.get(sid, 0.0), max(bk.values(), default=0.0))
    bounds = sorted({ub for bk in series.values() for ub in bk} | {INF})
    combined = []
    for ub in bounds:
        total = 0.0
        for bk in series.values():
            below = [c for b, c in bk.items() if b <= ub]
            if below:
                total += max(below)
        combined.append((ub, total))
    count = sum(counts.values()) if counts else (combined[-1][1] if combined else 0.0)
    return Histogram(combined, sum(sums.values()), count)


def sum_by(samples: dict[SampleKey, float], name: str, keys: tuple[str, ...], match: Callable[[dict], bool] = lambda d: True) -> dict[tuple, float]:
    out: dict[tuple, float] = {}
    for (n, labels), value in samples.items():
        if n != name:
            continue
        d = dict(labels)
        if not match(d):
            continue
        k = tuple(d.get(x, "") for x in keys)
        out[k] = out.get(k, 0.0) + value
    return out


def first_present(samples: dict[SampleKey, float], *names: str) -> float | None:
    for name in names:
        if (name, ()) in samples:
            return samples[(name, ())]
    return None


# --------------------------------------------------------------------------------------------
# k6 summary
# --------------------------------------------------------------------------------------------

def _submetric_tags(key: str, base: str) -> dict[str, str] | None:
    if not (key.startswith(base + "{") and key.endswith("}")):
        return None
    tags = {}
    for part in key[len(base) + 1 : -1].split(","):
        if ":" in part:
            k, v = part.split(":", 1)
            tags[k.strip()] = v.strip()
    return tags


def k6_values(metrics: dict, base: str, prefer_benchmark: bool = True) -> tuple[dict | None, bool]:
    """The values of a k6 metric, preferring the `{scenario:benchmark}` submetric. Returns
    (values, from_benchmark_submetric)."""
    if not isinstance(metrics, dict):
        return None, False
    if prefer_benchmark:
        for key, m in metrics.items():
            if _submetric_tags(key, base) == {"scenario": "benchmark"} and isinstance(m, dict):
                return _metric_values(m), True
    m = metrics.get(base)
    if isinstance(m, dict):
        return _metric_values(m), False
    return None, False


def _metric_values(m: dict) -> dict:
    # handleSummary data has {"type", "contains", "values": {...}}; --summary-export is flat.
    v = m.get("values")
    return v if isinstance(v, dict) else m


def _num(v) -> float | None:
    if isinstance(v, bool) or v is None:
        return None
    if isinstance(v, (int, float)):
        return None if math.isnan(v) else float(v)
    try:
        f = float(v)
        return None if math.isnan(f) else f
    except (TypeError, ValueError):
        return None


# --------------------------------------------------------------------------------------------
# One run
# --------------------------------------------------------------------------------------------

@dataclass
class Run:
    path: str
    scenario: str = "unknown"
    preset: str = "-"
    target: float | None = None
    started: str | None = None
    machine: str | None = None
    shards_cfg: dict = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    # k6
    duration_s: float | None = None
    vus_max: float | None = None
    requests: float | None = None
    requests_benchmark_only: bool = False
    mean_rps: float | None = None
    iterations: float | None = None
    dropped: float | None = None
    success: float | None = None
    failures: float | None = None
    http_failed: float | None = None
    client: dict = field(default_factory=dict)  # ms: avg, med, min, max, p90, p95, p99
    client_benchmark_only: bool = False
    thresholds: list[tuple[str, str, bool]] = field(default_factory=list)
    # server
    has_metrics: bool = False
    server: Histogram | None = None
    server_status: dict[str, float] = field(default_factory=dict)
    cpu: Histogram | None = None
    stores: dict[str, Histogram] = field(default_factory=dict)
    stores_all: Histogram | None = None
    durable: dict[str, Histogram] = field(default_factory=dict)  # writes that waited for a commit
    shard_ops: dict[str, dict[str, float]] = field(default_factory=dict)
    shard_count: dict[str, int] = field(default_factory=dict)
    entries: dict[str, float] = field(default_factory=dict)
    db: dict[str, float | None] = field(default_factory=dict)
    errors: dict[tuple[str, str], float] = field(default_factory=dict)
    label_filter: str = ""

    # ---- derived ------------------------------------------------------------------------
    @property
    def client_p95(self) -> float | None:
        return self.client.get("p95")

    @property
    def server_p99_ms(self) -> float | None:
        return _ms(self.server.quantile(0.99)) if self.server else None

    @property
    def store_p99_ms(self) -> float | None:
        return _ms(self.stores_all.quantile(0.99)) if self.stores_all else None

    @property
    def status(self) -> str:
        return judge_status(self.client_p95, self.store_p99_ms)

    @property
    def achievement(self) -> float | None:
        """Share of the scheduled arrivals that k6 started (iterations / (iterations + dropped))."""
        if self.iterations is None:
            return None
        scheduled = self.iterations + (self.dropped or 0.0)
        return self.iterations / scheduled if scheduled > 0 else None

    @property
    def mean_over_target(self) -> float | None:
        if self.mean_rps is None or not self.target:
            return None
        return self.mean_rps / self.target


def judge_status(client_p95_ms: float | None, store_p99_ms: float | None) -> str:
    """Seeds' rule: PASS = client P95 < 300 ms AND store P99 < 500 ms; WARN = one exceeds;
    FAIL = both. Without store operations, judged on client P95 alone."""
    if client_p95_ms is None:
        return "-"
    over = int(client_p95_ms >= CLIENT_P95_LIMIT_MS)
    if store_p99_ms is not None:
        over += int(store_p99_ms >= STORE_P99_LIMIT_MS)
    return ("PASS", "WARN", "FAIL")[over]


def _ms(seconds: float | None) -> float | None:
    if seconds is None or math.isnan(seconds):
        return None
    return seconds * 1000.0


def _read_json(path: str, notes: list[str]) -> dict:
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
        if isinstance(data, dict):
            return data
        notes.append(f"{os.path.basename(path)} is not a JSON object")
    except FileNotFoundError:
        notes.append(f"{os.path.basename(path)} missing")
    except (OSError, ValueError) as e:
        notes.append(f"{os.path.basename(path)} unreadable ({e.__class__.__name__})")
    return {}


def _read_text(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()
    except OSError:
        return None


def _shards_for(store: str, cfg: dict) -> int | None:
    for key, n in cfg.items():
        if _num(n) is None:
            continue
        k = re.sub(r"[^a-z]", "", str(key).lower())
        if k == store.lower() or any(h in k for h in SHARD_KEY_HINTS.get(store, ())):
            return int(_num(n))
    return None


def load_run(path: str) -> Run:
    run = Run(path=os.path.abspath(path))
    meta = _read_json(os.path.join(path, "run.json"), run.notes)
    base = os.path.basename(os.path.normpath(path))
    run.scenario = str(meta.get("scenario") or _guess_scenario(base) or "unknown")
    run.preset = str(meta.get("preset") or _guess_preset(base) or "-")
    run.target = _num(meta.get("target_rps"))
    if run.target is None:
        m = re.search(r"rps(\d+)", run.preset)
        if m:
            run.target = float(m.group(1))
    run.started = meta.get("started") if isinstance(meta.get("started"), str) else None
    run.machine = meta.get("machine") if isinstance(meta.get("machine"), str) else None
    run.shards_cfg = meta.get("shards") if isinstance(meta.get("shards"), dict) else {}

    summary = _read_json(os.path.join(path, "summary.json"), run.notes)
    if "metrics" not in summary and isinstance(summary.get("data"), dict):
        summary = summary["data"]
    load_k6(run, summary)

    before_text = _read_text(os.path.join(path, "metrics-before.txt"))
    after_text = _read_text(os.path.join(path, "metrics-after.txt"))
    if after_text is None:
        run.notes.append("metrics-after.txt missing: no server metrics")
    else:
        if before_text is None:
            run.notes.append("metrics-before.txt missing: server counters are totals since start")
        load_server(run, parse_prometheus(before_text or ""), parse_prometheus(after_text))
    return run


def _guess_scenario(name: str) -> str | None:
    for s in sorted(SCENARIO_LABELS, key=len, reverse=True):
        if s in name:
            return s
    return None


def _guess_preset(name: str) -> str | None:
    m = re.search(r"(rps\d+|smoke)", name)
    return m.group(1) if m else None


def load_k6(run: Run, data: dict) -> None:
    metrics = data.get("metrics") if isinstance(data.get("metrics"), dict) else {}
    state = data.get("state") if isinstance(data.get("state"), dict) else {}
    ms = _num(state.get("testRunDurationMs"))
    run.duration_s = ms / 1000.0 if ms is not None else None

    vals, _ = k6_values(metrics, "vus_max", prefer_benchmark=False)
    if vals:
        run.vus_max = _num(vals.get("max", vals.get("value")))

    vals, bench = k6_values(metrics, "http_req_duration")
    if vals:
        run.client_benchmark_only = bench
        for key, src in (("avg", "avg"), ("med", "med"), ("min", "min"), ("max", "max"),
                         ("p90", "p(90)"), ("p95", "p(95)"), ("p99", "p(99)")):
            v = _num(vals.get(src))
            if v is not None:
                run.client[key] = v

    vals, bench = k6_values(metrics, "http_reqs")
    if vals:
        run.requests = _num(vals.get("count"))
        run.requests_benchmark_only = bench
    if not run.requests_benchmark_only and run.client_benchmark_only:
        # summaryTrendStats with 'count' gives the benchmark's request count in the trend.
        bench_trend, _ = k6_values(metrics, "http_req_duration")
        if bench_trend and _num(bench_trend.get("count")) is not None:
            run.requests = _num(bench_trend.get("count"))
            run.requests_benchmark_only = True
    all_reqs, _ = k6_values(metrics, "http_reqs", prefer_benchmark=False)
    if all_reqs:
        run.mean_rps = _num(all_reqs.get("rate"))
        if run.mean_rps is None and run.duration_s and _num(all_reqs.get("count")) is not None:
            run.mean_rps = _num(all_reqs.get("count")) / run.duration_s

    vals, _ = k6_values(metrics, "iterations", prefer_benchmark=False)
    if vals:
        run.iterations = _num(vals.get("count"))
    vals, _ = k6_values(metrics, "dropped_iterations", prefer_benchmark=False)
    run.dropped = _num(vals.get("count")) if vals else (0.0 if run.iterations is not None else None)

    vals, _ = k6_values(metrics, "scenario_success")
    if vals and _num(vals.get("rate")) is not None:
        run.success = _num(vals.get("rate"))
        run.failures = _num(vals.get("fails"))
    vals, _ = k6_values(metrics, "http_req_failed")
    if vals and _num(vals.get("rate")) is not None:
        run.http_failed = _num(vals.get("rate"))
        if run.success is None:
            run.success = 1.0 - run.http_failed
            run.failures = _num(vals.get("passes"))
            run.notes.append("no scenario_success metric: success = 1 − http_req_failed")

    for name, m in sorted(metrics.items()):
        th = m.get("thresholds") if isinstance(m, dict) else None
        if isinstance(th, dict):
            for expr, res in th.items():
                ok = res.get("ok") if isinstance(res, dict) else res
                if isinstance(ok, bool):
                    run.thresholds.append((name, expr, ok))


def _store_rank(store: str) -> tuple:
    return (STORE_ORDER.index(store) if store in STORE_ORDER else 99, store)


def load_server(run: Run, before: dict, after: dict) -> None:
    run.has_metrics = True
    d = diff_samples(before, after)
    labels = SCENARIO_LABELS.get(run.scenario)
    if labels:
        endpoint, grant = labels
        match = lambda l: l.get("endpoint") == endpoint and l.get("grant_type", "") == grant  # noqa: E731
        run.label_filter = f'endpoint="{endpoint}", grant_type="{grant}"'
    else:
        match = lambda l: l.get("endpoint") not in NON_LOAD_ENDPOINTS  # noqa: E731
        run.label_filter = "all endpoints except " + ", ".join(sorted(NON_LOAD_ENDPOINTS))
        run.notes.append(f"unknown scenario {run.scenario!r}: server metrics over {run.label_filter}")

    run.server = collect_histogram(d, M_DURATION, match)
    run.server_status = {k[0]: v for k, v in sum_by(d, M_DURATION + "_count", ("status",), match).items() if v}
    run.cpu = collect_histogram(d, M_CPU, match)

    store_names = {dict(l).get("store") for (n, l) in list(d) + list(after) if n.startswith(M_STORE) or n == M_ENTRIES}
    store_names.discard(None)
    for store in sorted(store_names, key=_store_rank):
        h = collect_histogram(d, M_STORE, lambda l, s=store: l.get("store") == s)
        if h is not None and h.count > 0:
            run.stores[store] = h
        ops = {k[0]: v for k, v in sum_by(d, M_STORE + "_count", ("shard",), lambda l, s=store: l.get("store") == s).items()}
        ent = sum_by(after, M_ENTRIES, ("shard",), lambda l, s=store: l.get("store") == s)
        if ent:
            run.entries[store] = sum(ent.values())
        n = max(len(ent), len(ops), _shards_for(store, run.shards_cfg) or 0)
        if n:
            run.shard_count[store] = n
        if ops:
            run.shard_ops[store] = ops
    for store in sorted({dict(l).get("store") for (n, l) in d if n.startswith(M_DURABLE)} - {None}):
        h = collect_histogram(d, M_DURABLE, lambda l, s=store: l.get("store") == s)
        if h is not None and h.count > 0:
            run.durable[store] = h
    all_stores = collect_histogram(d, M_STORE, lambda l: True)
    run.stores_all = all_stores if all_stores is not None and all_stores.count > 0 else None

    for key, names in M_DB.items():
        run.db[key] = first_present(d, names + "_total", names)
    errs = sum_by(d, M_ERRORS + "_total", ("endpoint", "error")) or sum_by(d, M_ERRORS, ("endpoint", "error"))
    run.errors = {k: v for k, v in errs.items() if v}


def discover_runs(paths: Iterable[str]) -> list[str]:
    out = []
    for p in paths:
        if os.path.isdir(p) and not os.path.exists(os.path.join(p, "run.json")):
            subs = sorted(os.path.join(p, s) for s in os.listdir(p) if os.path.isfile(os.path.join(p, s, "run.json")))
            if subs:
                out.extend(subs)
                continue
        out.append(p)
    return out


def sort_runs(runs: list[Run]) -> list[Run]:
    return sorted(runs, key=lambda r: (r.target is None, r.target or 0.0, r.scenario, r.started or "", r.path))


# --------------------------------------------------------------------------------------------
# Formatting
# --------------------------------------------------------------------------------------------

def fmt_int(v: float | None) -> str:
    return "-" if v is None else f"{int(round(v)):,}"


def fmt_ms(v: float | None, unit: bool = False) -> str:
    if v is None or math.isnan(v):
        return "-"
    if math.isinf(v):
        s = "∞"
    elif abs(v) >= 1:
        s = f"{v:,.2f}"
    elif abs(v) >= 0.01 or v == 0:
        s = f"{v:.3f}" if v else "0"
    else:
        s = f"{v:.4f}"
    return s + ("ms" if unit else "")


def fmt_pct(v: float | None) -> str:
    if v is None:
        return "-"
    p = v * 100.0
    if p == 100.0:
        return "100%"
    s = f"{p:.3f}".rstrip("0").rstrip(".")
    if s == "100":  # just below 100 %: never round up to a perfect score
        s = "99.999"
    return s + "%"


def fmt_pct1(v: float | None) -> str:
    """A percentage to one decimal, rounded down (94.96 % must not read as 95.0 %)."""
    if v is None:
        return "-"
    p = v * 100.0
    if abs(p - round(p)) < 1e-9:
        return f"{round(p)}%"
    return f"{math.floor(p * 10) / 10:.1f}%"


def fmt_ratio(v: float | None, digits: int = 2) -> str:
    return "-" if v is None else f"{v:.{digits}f}"


def md_table(headers: list[str], rows: list[list[str]], align: str | None = None) -> str:
    """align: one char per column, l/r/c (default: first r, others r)."""
    align = align or "r" * len(headers)
    seps = {"l": "---", "r": "---:", "c": ":---:"}
    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join(seps[a] for a in align) + "|"]
    for row in rows:
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in row) + " |")
    return "\n".join(lines)


def run_labels(runs: list[Run]) -> list[str]:
    """Row label of each run: its target RPS (plus preset or directory when targets repeat)."""
    base = [fmt_int(r.target) if r.target is not None else r.preset for r in runs]
    out = []
    for r, b in zip(runs, base):
        if base.count(b) > 1:
            out.append(f"{b} ({os.path.basename(r.path)})")
        else:
            out.append(b)
    return out


def _date(iso: str | None) -> _dt.datetime | None:
    if not iso:
        return None
    try:
        d = _dt.datetime.fromisoformat(iso.strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    return d


def _quantile_cells(h: Histogram | None) -> list[str]:
    if h is None:
        return ["-"] * len(QUANTILES)
    return [fmt_ms(_ms(h.quantile(q))) for q, _ in QUANTILES]


# --------------------------------------------------------------------------------------------
# Capacity
# --------------------------------------------------------------------------------------------

@dataclass
class Capacity:
    recommended: float | None
    peak: float | None
    hard_limit: float | None  # None = not reached


def meets_recommended(r: Run) -> bool:
    return (r.status == "PASS" and r.success is not None and r.success >= RECOMMENDED_SUCCESS
            and r.achievement is not None and r.achievement >= RECOMMENDED_ACHIEVEMENT)


def meets_peak(r: Run) -> bool:
    return (r.success is not None and r.success >= PEAK_SUCCESS
            and r.achievement is not None and r.achievement >= PEAK_ACHIEVEMENT)


def fails_peak(r: Run) -> bool:
    """Known to miss success ≥ 99 % or achievement ≥ 90 % (unknown values do not count)."""
    return ((r.success is not None and r.success < PEAK_SUCCESS)
            or (r.achievement is not None and r.achievement < PEAK_ACHIEVEMENT))


def capacity(runs: list[Run]) -> Capacity:
    rated = [r for r in runs if r.target is not None]
    failed = [r.target for r in rated if fails_peak(r)]
    hard = min(failed) if failed else None
    # A run above the hard limit that happens to pass does not raise the capacity.
    below = [r for r in rated if hard is None or r.target < hard]
    rec = [r.target for r in below if meets_recommended(r)]
    peak = [r.target for r in below if meets_peak(r)]
    return Capacity(max(rec) if rec else None, max(peak) if peak else None, hard)


def _rps(v: float | None, none: str = "not reached") -> str:
    return none if v is None else f"{fmt_int(v)} RPS"


# --------------------------------------------------------------------------------------------
# Report
# --------------------------------------------------------------------------------------------

def render_report(runs: list[Run], svg_name: str | None = "latency.svg") -> str:
    runs = sort_runs(runs)
    labels = run_labels(runs)
    scenarios = sorted({r.scenario for r in runs})
    scenario = scenarios[0] if len(scenarios) == 1 else None
    title, target_desc = SCENARIO_TITLES.get(scenario or "", (None, None))
    if title is None:
        title = scenario or "Mixed Scenarios"
        target_desc = (f"`{scenario}`" if scenario else ", ".join(f"`{s}`" for s in scenarios))
    out: list[str] = []
    w = out.append

    dates = sorted(d for d in (_date(r.started) for r in runs) if d)
    if dates:
        first, last = dates[0].date().isoformat(), dates[-1].date().isoformat()
        date_s = first if first == last else f"{first} – {last}"
    else:
        raw = [r.started for r in runs if r.started]
        date_s = raw[0] if raw else "-"
    machines = sorted({r.machine for r in runs if r.machine})
    presets = [r.preset for r in runs]

    w(f"# {title} Load Test Report\n")
    w(f"**Test Date**: {date_s}  ")
    w(f"**Target**: Authrim OIDC Provider - {target_desc}  ")
    w("**Test Tool**: k6 (arrival-rate executors, load generator on the same machine)  ")
    w("**Monitoring**: Authrim `/metrics` (Prometheus text), snapshots before and after each k6 run  ")
    w(f"**Machine**: {'; '.join(machines) if machines else '-'}  ")
    w(f"**Presets**: {', '.join(presets) if presets else '-'}\n")
    w("---\n")

    # 1. Overview ------------------------------------------------------------------------
    w("## 1. Overview\n")
    filters = sorted({r.label_filter for r in runs if r.label_filter})
    if filters:
        w("Server-side figures are the difference of the `/metrics` snapshots taken around each k6 run, "
          "restricted to the scenario's requests (" + "; ".join(f"`{f}`" for f in filters) + ") for "
          "request duration and CPU time. Store, database and error figures cover every request the "
          "server handled in that window (the warm-up included).\n")
    rows = []
    for r, lab in zip(runs, labels):
        d = _date(r.started)
        started = d.strftime("%Y-%m-%d %H:%M:%S %Z").strip() if d else (r.started or "-")
        th = "-"
        if r.thresholds:
            bad = [f"`{n} {e}`" for n, e, ok in r.thresholds if not ok]
            th = "all passed" if not bad else "failed: " + ", ".join(bad)
        dur = f"{r.duration_s:,.1f}s" if r.duration_s is not None else "-"
        rows.append([lab, r.scenario, r.preset, started, dur, fmt_int(r.vus_max), th])
    w("### 1.1 Test Matrix\n")
    w(md_table(["RPS", "Scenario", "Preset", "Started", "Duration", "Peak VU", "k6 thresholds"], rows, "rllllrl") + "\n")

    shard_stores = [s for s in STORE_ORDER if any(s in r.shard_count for r in runs)]
    shard_stores += sorted({s for r in runs for s in r.shard_count} - set(shard_stores))
    if shard_stores:
        w("### 1.2 Shard Configuration\n")
        configs = {tuple(r.shard_count.get(s) for s in shard_stores) for r in runs if r.shard_count}
        if len(configs) == 1:
            counts = configs.pop()
            w(md_table(["Store", "Shard Count"], [[s, fmt_int(c)] for s, c in zip(shard_stores, counts)], "lr") + "\n")
        else:
            w(md_table(["Store"] + labels, [[s] + [fmt_int(r.shard_count.get(s)) for r in runs] for s in shard_stores],
                       "l" + "r" * len(runs)) + "\n")
    notes = [(lab, n) for r, lab in zip(runs, labels) for n in r.notes]
    if notes:
        w("> **Input notes**: " + "; ".join(f"{lab}: {n}" for lab, n in notes) + "\n")
    w("---\n")

    # 2. Performance summary -------------------------------------------------------------
    w("## 2. Performance Summary\n")
    rows = []
    for r, lab in zip(runs, labels):
        rows.append([lab, fmt_int(r.requests), fmt_int(r.server.count if r.server else None), fmt_pct(r.success),
                     fmt_ms(r.client_p95, True), fmt_ms(r.server_p99_ms, True), fmt_ms(r.store_p99_ms, True), r.status])
    w(md_table(["RPS Target", "k6 Requests", "Server Requests", "Success Rate", "Client P95", "Server P99", "Store P99", "Status"],
               rows, "rrrrrrrc") + "\n")
    w(f"> **Status Criteria**: PASS = client P95 < {CLIENT_P95_LIMIT_MS:g}ms AND store P99 < {STORE_P99_LIMIT_MS:g}ms; "
      "WARN = one of them exceeded; FAIL = both. A run with no store operations is judged on client P95 alone. "
      "Success rate is the k6 `scenario_success` rate (the scenario's own success check); it enters the capacity "
      "ratings in §10, not the status.\n")
    req_srcs = {r.requests_benchmark_only for r in runs if r.requests is not None}
    if req_srcs:
        src = ("the benchmark scenario only (`http_reqs{scenario:benchmark}`)" if req_srcs == {True}
               else "every k6 request, warm-up included (`http_reqs`)" if req_srcs == {False}
               else "`http_reqs{scenario:benchmark}` where the summary has it, otherwise every k6 request")
        token_note = (" A token request rejected during client authentication is labelled `grant_type=\"\"` by the "
                      "server, so it is not in that count (it is in §9)."
                      if any(SCENARIO_LABELS.get(r.scenario, ("",))[0] == "token" for r in runs) else "")
        w(f"> **k6 Requests** counts {src}; **Server Requests** counts the scenario's requests in the server's "
          f"duration histogram over the same window (warm-up included).{token_note}\n")
    w("---\n")

    # 3. RPS achievement -----------------------------------------------------------------
    w("## 3. RPS Achievement\n")
    rows = []
    for r, lab in zip(runs, labels):
        rows.append([lab, fmt_ratio(r.mean_rps, 1) if r.mean_rps is not None else "-",
                     fmt_pct1(r.mean_over_target), fmt_int(r.iterations), fmt_int(r.dropped), fmt_pct1(r.achievement)])
    w(md_table(["Target RPS", "Mean RPS", "Mean / Target", "Iterations", "Dropped Iterations", "Achievement"], rows) + "\n")
    w("> **Note**: the k6 summary has no per-second series, so there is no peak RPS. **Mean RPS** is k6's "
      "`http_reqs` rate, the mean over the whole run including the warm-up and the ramps; the `rpsN` profile "
      "(ramp to N/2 over 15 s, to N over 180 s, to 0 over 15 s) averages about 0.7 × N even when every "
      "arrival is served, so Mean / Target is not a failure signal by itself. **Achievement** = iterations "
      "started / iterations scheduled (k6 counts `dropped_iterations` when no VU was free for an arrival): "
      "100% means the target arrival rate was delivered throughout.\n")
    w("---\n")

    # 4. Client latency ------------------------------------------------------------------
    w("## 4. k6 Client HTTP Response Time (ms)\n")
    rows = []
    for r, lab in zip(runs, labels):
        c = r.client
        rows.append([lab, fmt_int(r.requests), fmt_ms(c.get("avg")), fmt_ms(c.get("med")), fmt_ms(c.get("p95")),
                     fmt_ms(c.get("p99")), fmt_ms(c.get("min")), fmt_ms(c.get("max"))])
    w(md_table(["RPS", "Total", "Mean", "Median", "P95", "P99", "Min", "Max"], rows) + "\n")
    srcs = {r.client_benchmark_only for r in runs if r.client}
    src = ("the `benchmark` scenario (`http_req_duration{scenario:benchmark}`)" if srcs == {True}
           else "all requests (`http_req_duration`)" if srcs == {False}
           else "`http_req_duration{scenario:benchmark}` where present, otherwise all requests")
    w(f"> Latencies are from {src}. P99 shows \"-\" when the script did not ask k6 for it (`summaryTrendStats`).\n")
    if svg_name:
        w(f"![Client P95 and P99 against target RPS]({svg_name})\n")
    w("---\n")

    # 5. Server duration -----------------------------------------------------------------
    w("## 5. Server Request Duration (ms)\n")
    rows = [[lab, fmt_int(r.server.count if r.server else None)] + _quantile_cells(r.server) for r, lab in zip(runs, labels)]
    w(md_table(["RPS", "Total"] + [n for _, n in QUANTILES], rows) + "\n")
    w("> From `authrim_http_request_duration_seconds` (after − before, summed over status), quantiles "
      "interpolated linearly inside the buckets as Prometheus' `histogram_quantile` does. Buckets grow by "
      "√2 from 10 µs, so a quantile is exact only to its bucket's width.\n")
    statuses = sorted({s for r in runs for s in r.server_status}, key=lambda s: (len(s), s))
    if statuses:
        rows = [[lab] + [fmt_int(r.server_status.get(s)) if r.has_metrics else "-" for s in statuses] for r, lab in zip(runs, labels)]
        w("**Server responses by status**\n")
        w(md_table(["RPS"] + [f"HTTP {s}" for s in statuses], rows) + "\n")
    w("---\n")

    # 6. CPU -----------------------------------------------------------------------------
    w("## 6. Server CPU Time per Request (ms)\n")
    rows = [[lab, fmt_int(r.cpu.count if r.cpu else None)] + _quantile_cells(r.cpu) for r, lab in zip(runs, labels)]
    w(md_table(["RPS", "Sampled"] + [n for _, n in QUANTILES], rows) + "\n")
    w("> From `authrim_http_request_cpu_seconds`: the CPU time the request's own task spent on a thread "
      "(work handed to other tasks, such as group commits, is not included). A sample of the requests: "
      "at most one per server worker thread per millisecond.\n")
    w("---\n")

    # 7. Stores --------------------------------------------------------------------------
    w("## 7. Store Wall Time (ms)\n")
    stores = [s for s in STORE_ORDER if any(s in r.stores for r in runs)]
    stores += sorted({s for r in runs for s in r.stores} - set(stores))
    rows = []
    for r, lab in zip(runs, labels):
        if not r.has_metrics:
            rows.append([lab, "-", "-"] + ["-"] * len(QUANTILES))
            continue
        if r.stores_all is None:
            rows.append([lab, "(none)", "0"] + ["-"] * len(QUANTILES))
            continue
        for s in stores:
            h = r.stores.get(s)
            if h is not None:
                rows.append([lab, s, fmt_int(h.count)] + _quantile_cells(h))
        if len(r.stores) > 1:
            rows.append([lab, "**all stores**", fmt_int(r.stores_all.count)] + _quantile_cells(r.stores_all))
    w(md_table(["RPS", "Store", "Operations"] + [n for _, n in QUANTILES], rows, "rlr" + "r" * len(QUANTILES)) + "\n")
    w("> From `authrim_store_operation_seconds`, summed over shards. The summary's Store P99 is over all stores.\n")
    rows = [[lab, s, fmt_int(h.count)] + _quantile_cells(h)
            for r, lab in zip(runs, labels) for s, h in sorted(r.durable.items(), key=lambda kv: _store_rank(kv[0]))]
    if rows:
        w("**Durable writes alone**\n")
        w(md_table(["RPS", "Store", "Writes"] + [n for _, n in QUANTILES], rows, "rlr" + "r" * len(QUANTILES)) + "\n")
        w("> From `authrim_store_durable_write_seconds`: the operations above that answered only once their "
          "group commit was on disk. A store's figure over all operations mixes these with answers from "
          "memory (a refresh peeks, then rotates).\n")
    rows = []
    for r, lab in zip(runs, labels):
        for s in [s for s in STORE_ORDER if s in r.shard_ops or s in r.entries] + sorted((set(r.shard_ops) | set(r.entries)) - set(STORE_ORDER)):
            ops = r.shard_ops.get(s, {})
            total = sum(ops.values())
            if total <= 0 and not r.entries.get(s):
                continue
            n = max(r.shard_count.get(s, 0), len(ops))
            if total > 0 and n:
                counts = list(ops.values()) + [0.0] * (n - len(ops))
                mean = total / n
                cells = [fmt_int(min(counts)), fmt_int(max(counts)), fmt_ratio(max(counts) / mean)]
            else:
                cells = ["0", "0", "-"]
            rows.append([lab, s, fmt_int(n) if n else "-", fmt_int(total)] + cells + [fmt_int(r.entries.get(s))])
    if rows:
        w("**Per-shard load (hot-shard check)**\n")
        w(md_table(["RPS", "Store", "Shards", "Operations", "Min / Shard", "Max / Shard", "Max / Mean", "Entries (after)"],
                   rows, "rlrrrrrr") + "\n")
        w("> Shards without operations count as 0. Max / Mean near 1.00 means even spread; with few operations "
          "per shard some spread is chance. Entries are the `authrim_store_entries` gauge after the run.\n")
    w("---\n")

    # 8. Database ------------------------------------------------------------------------
    w("## 8. Database Metrics\n")
    rows = []
    for r, lab in zip(runs, labels):
        reads, writes, commits = (r.db.get(k) for k in ("reads", "writes", "commits"))
        wpc = fmt_ratio(writes / commits) if writes is not None and commits else "-"
        reqs = r.server.count if r.server else None
        wpr = fmt_ratio(writes / reqs, 3) if writes is not None and reqs else "-"
        rows.append([lab, fmt_int(reads), fmt_int(writes), fmt_int(commits), wpc, wpr])
    w(md_table(["RPS", "Read Queries", "Writes", "Commits", "Writes / Commit", "Writes / Request"], rows) + "\n")
    w("> `authrim_db_reads_total`, `authrim_db_writes_total`, `authrim_db_commits_total` (after − before). "
      "Writes / Commit > 1 means the journal grouped several writes into one transaction (group commit).\n")
    w("---\n")

    # 9. OAuth errors --------------------------------------------------------------------
    w("## 9. OAuth Errors\n")
    keys = sorted({k for r in runs for k in r.errors})
    if keys:
        rows = [[ep, err] + [fmt_int(r.errors.get((ep, err), 0)) if r.has_metrics else "-" for r in runs] for ep, err in keys]
        w(md_table(["Endpoint", "Error"] + [f"{lab} RPS" if r.target is not None else lab for r, lab in zip(runs, labels)],
                   rows, "ll" + "r" * len(runs)) + "\n")
        if scenario == "token-exchange":
            w("> The token-exchange mix expects HTTP 400 for its expired, invalid and revoked subject tokens "
              "(about 30% of the cases), so these errors are part of the workload, not failures.\n")
    elif any(r.has_metrics for r in runs):
        w("No OAuth error responses were recorded during the runs.\n")
    else:
        w("- (no server metrics)\n")
    w("> From `authrim_oauth_errors_total` (after − before), every endpoint.\n")
    w("---\n")

    # 10. Capacity -----------------------------------------------------------------------
    w("## 10. Performance Capacity\n")
    cap = capacity(runs)
    shards_desc = ", ".join(f"{s} {runs[-1].shard_count[s]}" for s in shard_stores if s in runs[-1].shard_count) if runs else ""
    config = "; ".join(machines) if machines else "-"
    w(md_table(["Configuration", "Recommended Operation", "Peak Handling", "Hard Limit"],
               [[f"**{config}**", _rps(cap.recommended, "-"), _rps(cap.peak, "-"), _rps(cap.hard_limit)]], "lrrr") + "\n")
    if shards_desc:
        w(f"Shards: {shards_desc}.\n")
    rows = []
    for r, lab in zip(runs, labels):
        rows.append([lab, r.status, fmt_pct(r.success), fmt_pct1(r.achievement),
                     "yes" if meets_recommended(r) else "no", "yes" if meets_peak(r) else "no",
                     "yes" if fails_peak(r) else "no"])
    w(md_table(["RPS", "Status", "Success", "Achievement", "Recommended criteria", "Peak criteria", "Breaks"], rows, "rcrrccc") + "\n")
    w(f"> **Recommended** = highest target with status PASS, success ≥ {RECOMMENDED_SUCCESS * 100:g}% and achievement "
      f"≥ {RECOMMENDED_ACHIEVEMENT * 100:g}%. **Peak** = highest target with success ≥ {PEAK_SUCCESS * 100:g}% and "
      f"achievement ≥ {PEAK_ACHIEVEMENT * 100:g}%. **Hard limit** = lowest target that missed either of those two "
      "(\"Breaks\"); targets above it do not count for the other two. Unknown values count as not met.\n")
    w(capacity_sentence(runs, cap) + "\n")
    w("---\n")
    w(f"*Generated by load-testing/report.py from {len(runs)} run(s): " + ", ".join(f"`{os.path.basename(r.path)}`" for r in runs) + "*\n")
    return "\n".join(out)


def capacity_sentence(runs: list[Run], cap: Capacity) -> str:
    rated = [r for r in runs if r.target is not None]
    if not rated:
        return "No run has a target RPS, so no capacity can be stated."
    if len(rated) == 1:
        r = rated[0]
        t = f"{fmt_int(r.target)} RPS"
        if meets_recommended(r):
            return (f"A single run: at {t} the server met every recommended-operation criterion (status {r.status}, "
                    f"success {fmt_pct(r.success)}, achievement {fmt_pct1(r.achievement)}), so its recommended "
                    f"operating load is at least {t}; higher targets were not tested, so the peak and hard limit are not known.")
        if meets_peak(r):
            return (f"A single run: at {t} the server kept success {fmt_pct(r.success)} and achievement "
                    f"{fmt_pct1(r.achievement)} (peak criteria met) but its status was {r.status}, so {t} is a peak "
                    "load rather than a recommended one; lower targets are needed to place the recommended level.")
        if fails_peak(r):
            return (f"A single run: at {t} the server broke (success {fmt_pct(r.success)}, achievement "
                    f"{fmt_pct1(r.achievement)}), so its hard limit is at or below {t}; run lower presets to place it.")
        return f"A single run at {t}, with too little data (success or achievement unknown) to rate it."
    parts = []
    if cap.recommended is not None:
        parts.append(f"recommended operation up to {fmt_int(cap.recommended)} RPS")
    if cap.peak is not None:
        parts.append(f"peaks up to {fmt_int(cap.peak)} RPS")
    if cap.hard_limit is not None:
        parts.append(f"breaks at {fmt_int(cap.hard_limit)} RPS")
    else:
        parts.append(f"no tested target broke it (highest tested: {fmt_int(max(r.target for r in rated))} RPS)")
    return "Across the runs: " + "; ".join(parts) + "."


# --------------------------------------------------------------------------------------------
# SVG chart
# --------------------------------------------------------------------------------------------

def nice_ceiling(v: float) -> float:
    if v <= 0 or math.isnan(v) or math.isinf(v):
        return 1.0
    exp = math.floor(math.log10(v))
    for m in (1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10):
        c = m * 10 ** exp
        if c >= v * (1 - 1e-12):
            return c
    return 10 ** (exp + 1)


def ticks(hi: float, n: int = 5) -> list[float]:
    """Ticks from 0 to >= hi at a 1/2/5 × 10^k step."""
    if hi <= 0:
        return [0.0, 1.0]
    raw = hi / n
    exp = math.floor(math.log10(raw))
    step = next(m * 10 ** exp for m in (1, 2, 2.5, 5, 10) if m * 10 ** exp >= raw * (1 - 1e-12))
    out, k = [], 0
    while True:
        t = round(k * step, 10)
        out.append(t)
        if t >= hi * (1 - 1e-12):
            break
        k += 1
    return out


def _tick_label(v: float) -> str:
    if v == int(v):
        return f"{int(v):,}"
    return f"{v:g}"


def render_svg(runs: list[Run]) -> str:
    runs = [r for r in sort_runs(runs) if r.target is not None]
    W, H = 760, 440
    left, right, top, bottom = 80, 30, 50, 70
    pw, ph = W - left - right, H - top - bottom
    series = [("P95", "p95", "#1f77b4", ""), ("P99", "p99", "#d62728", "6 4")]
    ys = [r.client.get(k) for r in runs for _, k, _, _ in series if r.client.get(k) is not None]
    with_data = [r for r in runs if any(r.client.get(k) is not None for _, k, _, _ in series)]
    xmax_data = max((r.target for r in (with_data or runs)), default=0.0)
    xt = ticks(nice_ceiling(xmax_data * 1.1) if xmax_data > 0 else 1.0)
    ymax_data = max(ys, default=0.0)
    yt = ticks(nice_ceiling(ymax_data * 1.15) if ymax_data > 0 else 1.0)
    xmax, ymax = xt[-1], yt[-1]

    def X(v: float) -> float:
        return left + pw * (v / xmax)

    def Y(v: float) -> float:
        return top + ph - ph * (v / ymax)

    scen = sorted({r.scenario for r in runs})
    title = "k6 client latency vs target RPS" + (f" — {scen[0]}" if len(scen) == 1 else "")
    e = lambda s: _xml_escape(str(s))  # noqa: E731
    o = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}" '
         'font-family="Helvetica, Arial, sans-serif" font-size="12">',
         f'<rect x="0" y="0" width="{W}" height="{H}" fill="#ffffff"/>',
         f'<text x="{W / 2:.1f}" y="26" text-anchor="middle" font-size="16" font-weight="bold">{e(title)}</text>']
    # grid and ticks
    for t in yt:
        y = Y(t)
        o.append(f'<line x1="{left}" y1="{y:.1f}" x2="{left + pw}" y2="{y:.1f}" stroke="#e5e5e5"/>')
        o.append(f'<line x1="{left - 5}" y1="{y:.1f}" x2="{left}" y2="{y:.1f}" stroke="#333"/>')
        o.append(f'<text x="{left - 8}" y="{y + 4:.1f}" text-anchor="end">{e(_tick_label(t))}</text>')
    for t in xt:
        x = X(t)
        o.append(f'<line x1="{x:.1f}" y1="{top}" x2="{x:.1f}" y2="{top + ph}" stroke="#f0f0f0"/>')
        o.append(f'<line x1="{x:.1f}" y1="{top + ph}" x2="{x:.1f}" y2="{top + ph + 5}" stroke="#333"/>')
        o.append(f'<text x="{x:.1f}" y="{top + ph + 20}" text-anchor="middle">{e(_tick_label(t))}</text>')
    # axes
    o.append(f'<line x1="{left}" y1="{top + ph}" x2="{left + pw}" y2="{top + ph}" stroke="#333"/>')
    o.append(f'<line x1="{left}" y1="{top}" x2="{left}" y2="{top + ph}" stroke="#333"/>')
    o.append(f'<text x="{left + pw / 2:.1f}" y="{H - 22}" text-anchor="middle" font-size="13">Target RPS</text>')
    o.append(f'<text x="22" y="{top + ph / 2:.1f}" text-anchor="middle" font-size="13" '
             f'transform="rotate(-90 22 {top + ph / 2:.1f})">Latency (ms)</text>')
    # p95 threshold, when it is inside the plotted range
    if CLIENT_P95_LIMIT_MS <= ymax:
        y = Y(CLIENT_P95_LIMIT_MS)
        o.append(f'<line x1="{left}" y1="{y:.1f}" x2="{left + pw}" y2="{y:.1f}" stroke="#999" stroke-dasharray="2 3"/>')
        o.append(f'<text x="{left + pw - 4}" y="{y - 4:.1f}" text-anchor="end" fill="#777" font-size="11">'
                 f'P95 limit {CLIENT_P95_LIMIT_MS:g} ms</text>')
    if not ys:
        o.append(f'<text x="{left + pw / 2:.1f}" y="{top + ph / 2:.1f}" text-anchor="middle" fill="#999" font-size="14">no latency data</text>')
    # series: a line through consecutive known points, a marker on every point
    for name, key, color, dash in series:
        pts = [(X(r.target), Y(r.client[key]), r) for r in runs if r.client.get(key) is not None]
        if len(pts) > 1:
            path = " ".join(f"{x:.1f},{y:.1f}" for x, y, _ in pts)
            dash_attr = f' stroke-dasharray="{dash}"' if dash else ""
            o.append(f'<polyline points="{path}" fill="none" stroke="{color}" stroke-width="2"{dash_attr}/>')
        for x, y, r in pts:
            o.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="4" fill="{color}">'
                     f'<title>{e(f"{name} at {fmt_int(r.target)} RPS: {fmt_ms(r.client[key])} ms")}</title></circle>')
    # legend
    lx, ly = left + 14, top + 10
    legend_w = 150 if all(any(r.client.get(k) is not None for r in runs) for _, k, _, _ in series) else 240
    o.append(f'<rect x="{lx - 8}" y="{ly - 6}" width="{legend_w}" height="{16 * len(series) + 12}" fill="#ffffff" fill-opacity="0.85" stroke="#ccc"/>')
    for i, (name, key, color, dash) in enumerate(series):
        y = ly + 8 + 16 * i
        dash_attr = f' stroke-dasharray="{dash}"' if dash else ""
        o.append(f'<line x1="{lx}" y1="{y}" x2="{lx + 26}" y2="{y}" stroke="{color}" stroke-width="2"{dash_attr}/>')
        o.append(f'<circle cx="{lx + 13}" cy="{y}" r="3.5" fill="{color}"/>')
        absent = "" if any(r.client.get(key) is not None for r in runs) else " (not in summary)"
        o.append(f'<text x="{lx + 34}" y="{y + 4}">client {name} (ms){absent}</text>')
    o.append("</svg>")
    return "\n".join(o) + "\n"


# --------------------------------------------------------------------------------------------
# CLI
# --------------------------------------------------------------------------------------------

def generate(run_dirs: list[str], out_dir: str) -> str:
    runs = sort_runs([load_run(p) for p in discover_runs(run_dirs)])
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "latency.svg"), "w", encoding="utf-8") as f:
        f.write(render_svg(runs))
    report = os.path.join(out_dir, "report.md")
    with open(report, "w", encoding="utf-8") as f:
        f.write(render_report(runs, "latency.svg"))
    return report


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Render the Authrim load-test report from run directories.")
    ap.add_argument("--out", required=True, help="output directory (report.md, latency.svg)")
    ap.add_argument("runs", nargs="+", metavar="RUN", help="run directory (run.json, summary.json, metrics-*.txt)")
    args = ap.parse_args(argv)
    missing = [p for p in args.runs if not os.path.isdir(p)]
    for p in missing:
        print(f"report.py: not a directory, skipped: {p}", file=sys.stderr)
    dirs = [p for p in args.runs if os.path.isdir(p)]
    if not dirs:
        print("report.py: no run directories", file=sys.stderr)
        return 2
    print(generate(dirs, args.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
