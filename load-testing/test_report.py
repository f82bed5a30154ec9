"""Unit tests of load-testing/report.py (standard library only).

    python3 -m unittest load-testing/test_report.py      (or: pytest load-testing/test_report.py)
"""
import contextlib
import importlib.util
import io
import json
import math
import os
import sys
import tempfile
import unittest
import xml.etree.ElementTree as ET

_HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location("report", os.path.join(_HERE, "report.py"))
report = importlib.util.module_from_spec(_spec)
sys.modules["report"] = report
_spec.loader.exec_module(report)

INF = float("inf")

# /metrics as prometheus-client writes it: `le` first, HELP/TYPE comments, `# EOF`.
METRICS_BEFORE = """\
# HELP authrim_http_request_duration_seconds Server-side request duration.
# TYPE authrim_http_request_duration_seconds histogram
authrim_http_request_duration_seconds_sum{endpoint="token",grant_type="refresh_token",status="200"} 0.01
authrim_http_request_duration_seconds_count{endpoint="token",grant_type="refresh_token",status="200"} 10
authrim_http_request_duration_seconds_bucket{le="0.001",endpoint="token",grant_type="refresh_token",status="200"} 5
authrim_http_request_duration_seconds_bucket{le="0.002",endpoint="token",grant_type="refresh_token",status="200"} 10
authrim_http_request_duration_seconds_bucket{le="0.004",endpoint="token",grant_type="refresh_token",status="200"} 10
authrim_http_request_duration_seconds_bucket{le="+Inf",endpoint="token",grant_type="refresh_token",status="200"} 10
authrim_http_request_duration_seconds_sum{endpoint="metrics",grant_type="",status="200"} 0.001
authrim_http_request_duration_seconds_count{endpoint="metrics",grant_type="",status="200"} 1
authrim_http_request_duration_seconds_bucket{le="0.001",endpoint="metrics",grant_type="",status="200"} 1
authrim_http_request_duration_seconds_bucket{le="0.002",endpoint="metrics",grant_type="",status="200"} 1
authrim_http_request_duration_seconds_bucket{le="0.004",endpoint="metrics",grant_type="",status="200"} 1
authrim_http_request_duration_seconds_bucket{le="+Inf",endpoint="metrics",grant_type="",status="200"} 1
# HELP authrim_oauth_errors Error responses by OAuth error code.
# TYPE authrim_oauth_errors counter
authrim_oauth_errors_total{endpoint="token",error="invalid_grant"} 2
# HELP authrim_db_reads Database read queries.
# TYPE authrim_db_reads counter
authrim_db_reads_total 7
authrim_db_writes_total 5
authrim_db_commits_total 5
# EOF
"""

# After the run: token/refresh_token/200 gained 90 (10 ≤ 1 ms, 50 in (1,2], 30 in (2,4]);
# status 400 is new with 10 ≤ 1 ms; labels deliberately out of order on some lines.
METRICS_AFTER = """\
# HELP authrim_http_request_duration_seconds Server-side request duration.
# TYPE authrim_http_request_duration_seconds histogram
authrim_http_request_duration_seconds_sum{endpoint="token",grant_type="refresh_token",status="200"} 0.16
authrim_http_request_duration_seconds_count{endpoint="token",grant_type="refresh_token",status="200"} 100
authrim_http_request_duration_seconds_bucket{le="0.001",endpoint="token",grant_type="refresh_token",status="200"} 15
authrim_http_request_duration_seconds_bucket{le="0.002",endpoint="token",grant_type="refresh_token",status="200"} 70
authrim_http_request_duration_seconds_bucket{le="0.004",endpoint="token",grant_type="refresh_token",status="200"} 100
authrim_http_request_duration_seconds_bucket{le="+Inf",endpoint="token",grant_type="refresh_token",status="200"} 100
authrim_http_request_duration_seconds_sum{status="400",grant_type="refresh_token",endpoint="token"} 0.005
authrim_http_request_duration_seconds_count{status="400",grant_type="refresh_token",endpoint="token"} 10
authrim_http_request_duration_seconds_bucket{status="400",le="0.001",grant_type="refresh_token",endpoint="token"} 10
authrim_http_request_duration_seconds_bucket{status="400",le="0.002",grant_type="refresh_token",endpoint="token"} 10
authrim_http_request_duration_seconds_bucket{status="400",le="0.004",grant_type="refresh_token",endpoint="token"} 10
authrim_http_request_duration_seconds_bucket{status="400",le="+Inf",grant_type="refresh_token",endpoint="token"} 10
authrim_http_request_duration_seconds_sum{endpoint="metrics",grant_type="",status="200"} 0.002
authrim_http_request_duration_seconds_count{endpoint="metrics",grant_type="",status="200"} 2
authrim_http_request_duration_seconds_bucket{le="0.001",endpoint="metrics",grant_type="",status="200"} 1
authrim_http_request_duration_seconds_bucket{le="0.002",endpoint="metrics",grant_type="",status="200"} 1
authrim_http_request_duration_seconds_bucket{le="0.004",endpoint="metrics",grant_type="",status="200"} 1
authrim_http_request_duration_seconds_bucket{le="+Inf",endpoint="metrics",grant_type="",status="200"} 2
authrim_http_request_duration_seconds_sum{endpoint="token",grant_type="",status="401"} 0.0001
authrim_http_request_duration_seconds_count{endpoint="token",grant_type="",status="401"} 3
authrim_http_request_duration_seconds_bucket{le="0.001",endpoint="token",grant_type="",status="401"} 3
authrim_http_request_duration_seconds_bucket{le="+Inf",endpoint="token",grant_type="",status="401"} 3
# HELP authrim_http_request_cpu_seconds CPU time spent on a request (its own task).
# TYPE authrim_http_request_cpu_seconds histogram
authrim_http_request_cpu_seconds_sum{endpoint="token",grant_type="refresh_token"} 0.05
authrim_http_request_cpu_seconds_count{endpoint="token",grant_type="refresh_token"} 100
authrim_http_request_cpu_seconds_bucket{le="0.0005",endpoint="token",grant_type="refresh_token"} 50
authrim_http_request_cpu_seconds_bucket{le="0.001",endpoint="token",grant_type="refresh_token"} 100
authrim_http_request_cpu_seconds_bucket{le="+Inf",endpoint="token",grant_type="refresh_token"} 100
# HELP authrim_oauth_errors Error responses by OAuth error code.
# TYPE authrim_oauth_errors counter
authrim_oauth_errors_total{endpoint="token",error="invalid_grant"} 12
authrim_oauth_errors_total{endpoint="token",error="invalid_client"} 3
# HELP authrim_store_operation_seconds Store wall time per operation, by store and shard.
# TYPE authrim_store_operation_seconds histogram
authrim_store_operation_seconds_sum{store="RefreshTokenRotator",shard="0"} 0.3
authrim_store_operation_seconds_count{store="RefreshTokenRotator",shard="0"} 150
authrim_store_operation_seconds_bucket{le="0.001",store="RefreshTokenRotator",shard="0"} 100
authrim_store_operation_seconds_bucket{le="0.01",store="RefreshTokenRotator",shard="0"} 150
authrim_store_operation_seconds_bucket{le="+Inf",store="RefreshTokenRotator",shard="0"} 150
authrim_store_operation_seconds_sum{store="RefreshTokenRotator",shard="1"} 0.1
authrim_store_operation_seconds_count{store="RefreshTokenRotator",shard="1"} 50
authrim_store_operation_seconds_bucket{le="0.001",store="RefreshTokenRotator",shard="1"} 50
authrim_store_operation_seconds_bucket{le="0.01",store="RefreshTokenRotator",shard="1"} 50
authrim_store_operation_seconds_bucket{le="+Inf",store="RefreshTokenRotator",shard="1"} 50
# HELP authrim_store_durable_write_seconds Store wall time of the operations that waited for a durable commit.
# TYPE authrim_store_durable_write_seconds histogram
authrim_store_durable_write_seconds_sum{store="RefreshTokenRotator"} 0.2
authrim_store_durable_write_seconds_count{store="RefreshTokenRotator"} 100
authrim_store_durable_write_seconds_bucket{le="0.001",store="RefreshTokenRotator"} 50
authrim_store_durable_write_seconds_bucket{le="0.01",store="RefreshTokenRotator"} 100
authrim_store_durable_write_seconds_bucket{le="+Inf",store="RefreshTokenRotator"} 100
# HELP authrim_store_entries Entries held per store shard.
# TYPE authrim_store_entries gauge
authrim_store_entries{store="RefreshTokenRotator",shard="0"} 6
authrim_store_entries{store="RefreshTokenRotator",shard="1"} 2
authrim_store_entries{store="RefreshTokenRotator",shard="2"} 0
authrim_store_entries{store="RefreshTokenRotator",shard="3"} 0
# HELP authrim_db_reads Database read queries.
# TYPE authrim_db_reads counter
authrim_db_reads_total 10
authrim_db_writes_total 205
authrim_db_commits_total 105
# EOF
"""


def k6_summary(p95=12.0, p99=None, benchmark=True, count=1000, rate=50.0, success=1.0, dropped=None):
    """A k6 handleSummary `data` object, trimmed to what report.py reads."""
    trend = {"avg": 6.0, "min": 1.5, "med": 5.0, "max": 80.0, "p(90)": 9.0, "p(95)": p95}
    if p99 is not None:
        trend["p(99)"] = p99
    metrics = {
        # the all-requests trend is deliberately different, to see which one is used
        "http_req_duration": {"type": "trend", "contains": "time", "values": dict(trend, **{"p(95)": 999.0})},
        "http_reqs": {"type": "counter", "contains": "default", "values": {"count": count, "rate": rate}},
        "iterations": {"type": "counter", "contains": "default", "values": {"count": count, "rate": rate}},
        "scenario_success": {"type": "rate", "contains": "default",
                             "values": {"rate": success, "passes": round(count * success), "fails": count - round(count * success)},
                             "thresholds": {"rate>0.99": {"ok": success > 0.99}}},
        "http_req_failed": {"type": "rate", "contains": "default", "values": {"rate": 0.0, "passes": 0, "fails": count}},
        "vus_max": {"type": "gauge", "contains": "default", "values": {"value": 20, "min": 20, "max": 20}},
    }
    if benchmark:
        metrics["http_req_duration{scenario:benchmark}"] = {
            "type": "trend", "contains": "time", "values": trend, "thresholds": {"p(95)<300": {"ok": p95 < 300}}}
    if dropped is not None:
        metrics["dropped_iterations"] = {"type": "counter", "contains": "default", "values": {"count": dropped, "rate": 1.0}}
    return {"root_group": {}, "options": {}, "state": {"isStdOutTTY": False, "testRunDurationMs": 20000.0}, "metrics": metrics}


def write_run(root, name, run_json=None, summary=None, before=None, after=None):
    d = os.path.join(root, name)
    os.makedirs(d)
    for fname, content in (("run.json", run_json), ("summary.json", summary)):
        if content is not None:
            with open(os.path.join(d, fname), "w") as f:
                f.write(content if isinstance(content, str) else json.dumps(content))
    for fname, content in (("metrics-before.txt", before), ("metrics-after.txt", after)):
        if content is not None:
            with open(os.path.join(d, fname), "w") as f:
                f.write(content)
    return d


def make_run(target, p95, store_p99_s=None, success=1.0, dropped=None):
    """A Run with just what status and capacity look at."""
    r = report.Run(path=f"/x/rps{target}", scenario="refresh-rotation", target=float(target))
    r.client = {"p95": p95}
    r.success = success
    r.iterations = 1000.0
    r.dropped = float(dropped or 0)
    if store_p99_s is not None:
        # all observations in (0, 2·x]: the p99 interpolates to 0.99 · 2x
        r.stores_all = report.Histogram([(2 * store_p99_s / 0.99, 100.0), (INF, 100.0)], 1.0, 100.0)
    return r


class PrometheusParsing(unittest.TestCase):
    def test_labels_in_any_order_and_escapes(self):
        s = report.parse_prometheus(
            'm_bucket{le="0.5",b="x,y}",a="q\\"uote\\\\"} 3\n'
            'm_bucket{a="q\\"uote\\\\",le="+Inf",b="x,y}",} 4 1700000000000\n')
        self.assertEqual(s[("m_bucket", (("a", 'q"uote\\'), ("b", "x,y}"), ("le", "0.5")))], 3.0)
        self.assertEqual(s[("m_bucket", (("a", 'q"uote\\'), ("b", "x,y}"), ("le", "+Inf")))], 4.0)

    def test_comments_created_exemplars_and_junk_are_skipped(self):
        s = report.parse_prometheus(
            "# HELP c help\n# TYPE c counter\nc_total 5 # {trace_id=\"a\"} 1.0 123\nc_created 17e8\n"
            "broken{a=\"x 1\nnoval\nd NaN\ne 1e-05\n# EOF\n")
        self.assertEqual(s[("c_total", ())], 5.0)
        self.assertNotIn(("c_created", ()), s)
        self.assertAlmostEqual(s[("e", ())], 1e-5)
        self.assertTrue(math.isnan(s[("d", ())]))
        self.assertEqual(len(s), 3)

    def test_real_page_parses(self):
        s = report.parse_prometheus(METRICS_AFTER)
        self.assertEqual(s[("authrim_db_writes_total", ())], 205.0)
        key = ("authrim_http_request_duration_seconds_bucket",
               (("endpoint", "token"), ("grant_type", "refresh_token"), ("le", "0.001"), ("status", "400")))
        self.assertEqual(s[key], 10.0)

    def test_diff_and_counter_reset(self):
        before = {("c_total", ()): 10.0, ("h_bucket", (("le", "1"),)): 5.0, ("h_bucket", (("le", "+Inf"),)): 8.0,
                  ("h_count", ()): 8.0, ("g_total", (("x", "1"),)): 3.0}
        after = {("c_total", ()): 4.0, ("h_bucket", (("le", "1"),)): 6.0, ("h_bucket", (("le", "+Inf"),)): 10.0,
                 ("h_count", ()): 10.0, ("g_total", (("x", "1"),)): 5.0, ("new_total", ()): 2.0}
        d = report.diff_samples(before, after)
        self.assertEqual(d[("c_total", ())], 4.0)  # went down: restarted, take after whole
        self.assertEqual(d[("h_bucket", (("le", "1"),))], 1.0)
        self.assertEqual(d[("h_bucket", (("le", "+Inf"),))], 2.0)
        self.assertEqual(d[("g_total", (("x", "1"),))], 2.0)
        self.assertEqual(d[("new_total", ())], 2.0)

    def test_histogram_reset_takes_whole_series(self):
        before = {("h_bucket", (("le", "1"),)): 5.0, ("h_bucket", (("le", "+Inf"),)): 50.0, ("h_count", ()): 50.0}
        after = {("h_bucket", (("le", "1"),)): 6.0, ("h_bucket", (("le", "+Inf"),)): 7.0, ("h_count", ()): 7.0}
        d = report.diff_samples(before, after)
        self.assertEqual(d[("h_bucket", (("le", "1"),))], 6.0)  # not 1: the series was reset
        self.assertEqual(d[("h_count", ())], 7.0)


class Quantiles(unittest.TestCase):
    B = [(0.001, 20.0), (0.002, 70.0), (0.004, 100.0), (INF, 100.0)]

    def test_interpolates_like_histogram_quantile(self):
        q = report.histogram_quantile
        self.assertAlmostEqual(q(0.10, self.B), 0.0005)  # first bucket starts at 0
        self.assertAlmostEqual(q(0.50, self.B), 0.001 + 0.001 * 30 / 50)
        self.assertAlmostEqual(q(0.75, self.B), 0.002 + 0.002 * 5 / 30)
        self.assertAlmostEqual(q(0.99, self.B), 0.002 + 0.002 * 29 / 30)
        self.assertAlmostEqual(q(1.0, self.B), 0.004)

    def test_rank_in_inf_bucket_returns_highest_finite_bound(self):
        b = [(0.001, 1.0), (0.002, 2.0), (INF, 10.0)]
        self.assertEqual(report.histogram_quantile(0.99, b), 0.002)

    def test_no_data(self):
        self.assertIsNone(report.histogram_quantile(0.5, []))
        self.assertIsNone(report.histogram_quantile(0.5, [(0.001, 0.0), (INF, 0.0)]))
        self.assertIsNone(report.histogram_quantile(0.5, [(0.001, 3.0), (0.002, 4.0)]))  # no +Inf

    def test_non_monotonic_buckets_are_fixed(self):
        b = [(1.0, 10.0), (2.0, 9.0), (4.0, 20.0), (INF, 20.0)]
        self.assertAlmostEqual(report.histogram_quantile(0.5, b), 1.0)

    def test_collect_sums_over_status_and_filters_labels(self):
        d = report.diff_samples(report.parse_prometheus(METRICS_BEFORE), report.parse_prometheus(METRICS_AFTER))
        h = report.collect_histogram(d, report.M_DURATION,
                                     lambda l: l.get("endpoint") == "token" and l.get("grant_type") == "refresh_token")
        self.assertEqual(h.count, 100.0)  # 90 new 200s + 10 new 400s; metrics and grant_type="" excluded
        self.assertEqual(h.buckets, self.B)
        self.assertAlmostEqual(h.sum, 0.155)

    def test_collect_with_different_bucket_layouts(self):
        samples = {("h_bucket", (("le", "1"), ("s", "a"))): 2.0, ("h_bucket", (("le", "+Inf"), ("s", "a"))): 4.0,
                   ("h_bucket", (("le", "2"), ("s", "b"))): 1.0, ("h_bucket", (("le", "+Inf"), ("s", "b"))): 1.0}
        h = report.collect_histogram(samples, "h", lambda l: True)
        self.assertEqual(h.buckets, [(1.0, 2.0), (2.0, 3.0), (INF, 5.0)])
        self.assertIsNone(report.collect_histogram(samples, "nothing", lambda l: True))


class K6Summary(unittest.TestCase):
    def test_prefers_benchmark_submetric_and_p99_absent(self):
        r = report.Run(path="x")
        report.load_k6(r, k6_summary(p95=12.0))
        self.assertEqual(r.client["p95"], 12.0)
        self.assertTrue(r.client_benchmark_only)
        self.assertNotIn("p99", r.client)
        self.assertEqual(r.requests, 1000)
        self.assertEqual(r.success, 1.0)
        self.assertEqual(r.achievement, 1.0)
        self.assertEqual(r.vus_max, 20)
        self.assertEqual(r.duration_s, 20.0)
        self.assertIn(("http_req_duration{scenario:benchmark}", "p(95)<300", True), r.thresholds)

    def test_falls_back_to_all_requests_and_reads_p99(self):
        r = report.Run(path="x")
        report.load_k6(r, k6_summary(p95=12.0, p99=20.0, benchmark=False, dropped=250))
        self.assertEqual(r.client["p95"], 999.0)
        self.assertFalse(r.client_benchmark_only)
        self.assertEqual(r.achievement, 1000 / 1250)

    def test_submetric_key_with_spaces_and_flat_export_format(self):
        m = {"http_req_duration{ scenario: benchmark }": {"p(95)": 7.0, "avg": 3.0}}
        vals, bench = report.k6_values(m, "http_req_duration")
        self.assertTrue(bench)
        self.assertEqual(vals["p(95)"], 7.0)

    def test_success_falls_back_to_http_req_failed(self):
        s = k6_summary()
        del s["metrics"]["scenario_success"]
        s["metrics"]["http_req_failed"]["values"]["rate"] = 0.02
        r = report.Run(path="x")
        report.load_k6(r, s)
        self.assertAlmostEqual(r.success, 0.98)

    def test_garbage_is_tolerated(self):
        r = report.Run(path="x")
        report.load_k6(r, {"metrics": {"http_req_duration": {"values": {"p(95)": "NaN", "avg": None}}}, "state": []})
        self.assertEqual(r.client, {})
        self.assertIsNone(r.achievement)


class Rules(unittest.TestCase):
    def test_status(self):
        j = report.judge_status
        self.assertEqual(j(120.0, 40.0), "PASS")
        self.assertEqual(j(300.0, 40.0), "WARN")
        self.assertEqual(j(120.0, 800.0), "WARN")
        self.assertEqual(j(500.0, 800.0), "FAIL")
        self.assertEqual(j(120.0, None), "PASS")  # no store operations: client P95 alone
        self.assertEqual(j(320.0, None), "WARN")
        self.assertEqual(j(None, 10.0), "-")

    def test_run_status_uses_store_p99(self):
        self.assertEqual(make_run(100, 50.0, store_p99_s=0.010).status, "PASS")
        self.assertEqual(make_run(100, 50.0, store_p99_s=0.900).status, "WARN")
        self.assertEqual(make_run(100, 900.0, store_p99_s=0.900).status, "FAIL")

    def test_capacity_over_several_runs(self):
        runs = [make_run(100, 20.0, 0.01), make_run(200, 150.0, 0.02, success=0.9995),
                make_run(300, 350.0, 0.05, success=0.995, dropped=50),   # WARN, still peak
                make_run(400, 900.0, 0.9, success=0.97, dropped=400),   # breaks
                make_run(500, 100.0, 0.01)]                              # above the hard limit: ignored
        cap = report.capacity(runs)
        self.assertEqual((cap.recommended, cap.peak, cap.hard_limit), (200.0, 300.0, 400.0))
        self.assertIn("breaks at 400 RPS", report.capacity_sentence(runs, cap))

    def test_capacity_single_run(self):
        good = [make_run(100, 20.0, 0.01)]
        cap = report.capacity(good)
        self.assertEqual((cap.recommended, cap.peak, cap.hard_limit), (100.0, 100.0, None))
        self.assertIn("at least 100 RPS", report.capacity_sentence(good, cap))
        bad = [make_run(100, 20.0, 0.01, success=0.5)]
        self.assertIn("at or below 100 RPS", report.capacity_sentence(bad, report.capacity(bad)))

    def test_formatting(self):
        self.assertEqual(report.fmt_int(292343.0), "292,343")
        self.assertEqual(report.fmt_int(None), "-")
        self.assertEqual(report.fmt_ms(1019.694), "1,019.69")
        self.assertEqual(report.fmt_ms(0.0523), "0.052")
        self.assertEqual(report.fmt_ms(0.00523), "0.0052")
        self.assertEqual(report.fmt_ms(None, True), "-")
        self.assertEqual(report.fmt_pct(1.0), "100%")
        self.assertEqual(report.fmt_pct(0.99998), "99.998%")
        self.assertEqual(report.fmt_pct(0.9999999), "99.999%")
        self.assertEqual(report.fmt_pct1(0.9496), "94.9%")
        self.assertEqual(report.fmt_pct1(1.0), "100%")
        self.assertEqual(report.fmt_pct1(None), "-")
        self.assertEqual(report.ticks(125.0), [0, 25, 50, 75, 100, 125])
        self.assertEqual(report.nice_ceiling(330.0), 400.0)


class EndToEnd(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.root = self.tmp.name
        shards = {"refresh_shards": 4, "AUTHRIM_REVOCATION_SHARDS": 16}
        self.r200 = write_run(self.root, "refresh-rotation-rps200",
                              {"scenario": "refresh-rotation", "preset": "rps200", "target_rps": 200,
                               "started": "2025-12-20T10:10:00Z", "machine": "test box", "shards": shards},
                              k6_summary(p95=350.0, p99=480.0, success=0.995, dropped=100), METRICS_BEFORE, METRICS_AFTER)
        self.r100 = write_run(self.root, "refresh-rotation-rps100",
                              {"scenario": "refresh-rotation", "preset": "rps100", "target_rps": 100,
                               "started": "2025-12-20T10:00:00Z", "machine": "test box", "shards": shards},
                              k6_summary(p95=12.0), METRICS_BEFORE, METRICS_AFTER)
        self.broken = write_run(self.root, "refresh-rotation-rps300",
                                '{"scenario": "refresh-rotation", "preset": "rps300", "target_rps": 300}',
                                "{not json", None, None)
        self.out = os.path.join(self.root, "out")

    def tearDown(self):
        self.tmp.cleanup()

    def _generate(self, *runs):
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            rc = report.main(["--out", self.out, *runs])
        self.assertEqual(rc, 0)
        path = buf.getvalue().strip()
        self.assertEqual(path, os.path.join(self.out, "report.md"))
        with open(path) as f:
            return f.read()

    def _row(self, md, section, first_cell):
        part = md.split(section, 1)[1]
        for line in part.splitlines():
            if line.startswith(f"| {first_cell} |"):
                return [c.strip() for c in line.strip("|").split("|")]
        self.fail(f"no row {first_cell!r} after {section!r}")

    def test_report_tables(self):
        md = self._generate(self.r200, self.broken, self.r100)
        self.assertTrue(md.startswith("# Refresh Token Rotation Load Test Report"))
        for heading in ("## 1. Overview", "## 2. Performance Summary", "## 3. RPS Achievement",
                        "## 4. k6 Client", "## 5. Server Request Duration", "## 6. Server CPU Time",
                        "## 7. Store Wall Time", "## 8. Database Metrics", "## 9. OAuth Errors",
                        "## 10. Performance Capacity"):
            self.assertIn(heading, md)
        # sorted by target
        self.assertLess(md.index("| 100 | refresh-rotation"), md.index("| 200 | refresh-rotation"))
        self.assertLess(md.index("| 200 | refresh-rotation"), md.index("| 300 | refresh-rotation"))

        s100 = self._row(md, "## 2. Performance Summary", "100")
        # target, k6 requests, server requests, success, client p95, server p99, store p99, status
        self.assertEqual(s100[:5], ["100", "1,000", "100", "100%", "12.00ms"])
        self.assertEqual(s100[5], report.fmt_ms((0.002 + 0.002 * 29 / 30) * 1000, True))
        self.assertEqual(s100[7], "PASS")
        self.assertEqual(self._row(md, "## 2. Performance Summary", "200")[7], "WARN")
        self.assertEqual(self._row(md, "## 2. Performance Summary", "300"), ["300"] + ["-"] * 7)

        c100 = self._row(md, "## 4. k6 Client", "100")
        self.assertEqual(c100[5], "-")  # no p(99) in the summary
        self.assertEqual(self._row(md, "## 4. k6 Client", "200")[5], "480.00")

        self.assertEqual(self._row(md, "## 5. Server Request Duration", "100"),
                         ["100", "100", "1.60", "2.33", "3.33", "3.93", "3.99"])
        self.assertEqual(self._row(md, "## 6. Server CPU Time", "100")[:3], ["100", "100", "0.500"])
        store = self._row(md, "## 7. Store Wall Time", "100")
        self.assertEqual(store[1:3], ["RefreshTokenRotator", "200"])
        # 100 durable writes of the 200 operations, half of them under 1 ms
        durable = self._row(md, "**Durable writes alone**", "100")
        self.assertEqual(durable[1:4], ["RefreshTokenRotator", "100", "1.00"])
        shard = self._row(md, "**Per-shard load", "100")
        # 4 shards (config, entries), 150 + 50 + 0 + 0 operations: max/mean = 150 / 50
        self.assertEqual(shard[1:], ["RefreshTokenRotator", "4", "200", "0", "150", "3.00", "8"])
        self.assertEqual(self._row(md, "## 8. Database Metrics", "100"), ["100", "3", "200", "100", "2.00", "2.000"])
        self.assertEqual(self._row(md, "## 9. OAuth Errors", "token")[:5], ["token", "invalid_client", "3", "3", "-"])
        self.assertIn("| token | invalid_grant | 10 | 10 | - |", md)
        ach = self._row(md, "## 3. RPS Achievement", "200")
        self.assertEqual(ach[-1], "90.9%")
        cap = self._row(md, "## 10. Performance Capacity", "**test box**")
        self.assertEqual(cap[1:], ["100 RPS", "200 RPS", "not reached"])
        self.assertIn("summary.json unreadable", md)
        self.assertIn("HTTP 400", md)

    def test_svg_is_well_formed_and_has_points(self):
        self._generate(self.r100, self.r200)
        tree = ET.parse(os.path.join(self.out, "latency.svg"))
        ns = "{http://www.w3.org/2000/svg}"
        circles = [c for c in tree.iter(ns + "circle") if c.find(ns + "title") is not None]
        self.assertEqual(len(circles), 3)  # p95 at 100 and 200, p99 only at 200
        texts = " ".join(t.text or "" for t in tree.iter(ns + "text"))
        self.assertIn("Target RPS", texts)
        self.assertIn("Latency (ms)", texts)
        self.assertIn("client P95", texts)
        self.assertFalse(os.path.exists(os.path.join(self.out, "latency.png")))

    def test_single_run_and_parent_directory(self):
        md = self._generate(self.r100)
        self.assertIn("A single run: at 100 RPS", md)
        ET.parse(os.path.join(self.out, "latency.svg"))
        md = self._generate(self.root)  # a directory of runs is expanded
        self.assertIn("3 run(s)", md)

    def test_nothing_but_a_directory(self):
        empty = write_run(self.root, "whatever", None, None, None, None)
        md = self._generate(empty)
        self.assertIn("run.json missing", md)
        ET.parse(os.path.join(self.out, "latency.svg"))

    def test_no_store_operations_and_unknown_scenario(self):
        after = "\n".join(l for l in METRICS_AFTER.splitlines() if "store_operation" not in l)
        d = write_run(self.root, "custom", {"scenario": "my-own", "preset": "smoke", "target_rps": 10},
                      k6_summary(p95=320.0), "", after)
        md = self._generate(d)
        row = self._row(md, "## 2. Performance Summary", "10")
        self.assertEqual(row[6:], ["-", "WARN"])  # judged on client p95 alone
        self.assertIn("unknown scenario", md)

    def test_missing_run_dir_is_an_error(self):
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            self.assertEqual(report.main(["--out", self.out, os.path.join(self.root, "nope")]), 2)


if __name__ == "__main__":
    unittest.main()
