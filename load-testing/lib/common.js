// Shared helpers for the scenario scripts (see load-testing/CONTRACT.md).
import { SharedArray } from 'k6/data';
import encoding from 'k6/encoding';
import { Rate } from 'k6/metrics';

export const BASE_URL = (__ENV.BASE_URL || 'http://127.0.0.1:18080').replace(/\/+$/, '');

// One sample per iteration: did the scenario's success check pass?
export const scenarioSuccess = new Rate('scenario_success');

export const TOKEN_TYPE_ACCESS_TOKEN = 'urn:ietf:params:oauth:token-type:access_token';

// Load the seed JSON named by SEED_FILE (init context only). Every top-level array becomes a
// SharedArray (one copy in memory for all VUs; elements are copied out on access), the other
// fields are plain values. `required` lists fields that must be present (arrays non-empty).
export function loadSeed(required) {
    const path = __ENV.SEED_FILE;
    if (!path) {
        throw new Error('SEED_FILE is not set (k6 run -e SEED_FILE=/abs/path/to/seed.json ...)');
    }
    const head = new SharedArray(`seed-head:${path}`, () => {
        const data = JSON.parse(open(path));
        const scalars = {};
        const arrays = [];
        for (const k of Object.keys(data)) {
            if (Array.isArray(data[k])) arrays.push(k);
            else scalars[k] = data[k];
        }
        return [{ scalars, arrays }];
    })[0];
    const seed = Object.assign({}, head.scalars);
    for (const k of head.arrays) {
        seed[k] = new SharedArray(`seed:${path}:${k}`, () => JSON.parse(open(path))[k]);
    }
    for (const k of required || []) {
        const v = seed[k];
        if (v === undefined || v === null || v === '' || (head.arrays.includes(k) && v.length === 0)) {
            throw new Error(`seed file ${path}: missing or empty field "${k}"`);
        }
    }
    return seed;
}

// `Authorization: Basic base64(urlencode(id):urlencode(secret))` (RFC 6749 §2.3.1).
export function basicAuth(clientId, clientSecret) {
    return `Basic ${encoding.b64encode(`${encodeURIComponent(clientId)}:${encodeURIComponent(clientSecret)}`)}`;
}

// Parse a JSON response body; null when it is not JSON.
export function jsonBody(res) {
    try {
        return JSON.parse(res.body);
    } catch (_) {
        return null;
    }
}

// Record the outcome of one iteration.
export function record(ok) {
    scenarioSuccess.add(ok ? 1 : 0);
    return ok;
}

// --- summary ---------------------------------------------------------------------------------

function fmtMs(v) {
    return typeof v === 'number' ? `${v.toFixed(2)}ms` : 'n/a';
}

function fmtPct(v) {
    return typeof v === 'number' ? `${(v * 100).toFixed(2)}%` : 'n/a';
}

function trendLine(label, m) {
    if (!m) return `  ${label}: n/a`;
    const v = m.values;
    return `  ${label}: avg=${fmtMs(v.avg)} p50=${fmtMs(v['p(50)'] !== undefined ? v['p(50)'] : v.med)} p95=${fmtMs(v['p(95)'])} p99=${fmtMs(v['p(99)'])} max=${fmtMs(v.max)}`;
}

function rateLine(label, m) {
    if (!m) return `  ${label}: n/a`;
    const v = m.values;
    return `  ${label}: ${fmtPct(v.rate)} (${v.passes} ok, ${v.fails} failed)`;
}

// A short plain-text end-of-test summary (k6's own textSummary lives on jslib.k6.io, which a
// load generator may not reach).
export function textSummary(data, scenarioName) {
    const m = data.metrics || {};
    const durationS = data.state && data.state.testRunDurationMs ? data.state.testRunDurationMs / 1000 : undefined;
    const lines = [];
    lines.push('');
    lines.push(`scenario ${scenarioName}  preset=${__ENV.PRESET || 'smoke'}  base_url=${BASE_URL}${durationS !== undefined ? `  duration=${durationS.toFixed(1)}s` : ''}`);
    const reqs = m.http_reqs && m.http_reqs.values;
    lines.push(`  requests: ${reqs ? reqs.count : 0} (${reqs ? reqs.rate.toFixed(1) : '0.0'}/s over the whole run)`);
    const bench = m['http_reqs{scenario:benchmark}'];
    if (bench) lines.push(`  benchmark requests: ${bench.values.count}`);
    lines.push(trendLine('http_req_duration (all)', m.http_req_duration));
    lines.push(trendLine('http_req_duration (benchmark)', m['http_req_duration{scenario:benchmark}']));
    lines.push(rateLine('scenario_success (all)', m.scenario_success));
    lines.push(rateLine('scenario_success (benchmark)', m['scenario_success{scenario:benchmark}']));
    if (m.http_req_failed) lines.push(`  http_req_failed: ${fmtPct(m.http_req_failed.values.rate)}`);
    if (m.vus_max) lines.push(`  vus_max: ${m.vus_max.values.max !== undefined ? m.vus_max.values.max : m.vus_max.values.value}`);
    if (m.dropped_iterations) lines.push(`  dropped_iterations: ${m.dropped_iterations.values.count}`);
    const th = [];
    for (const name of Object.keys(m).sort()) {
        const t = m[name].thresholds;
        if (!t) continue;
        for (const expr of Object.keys(t)) th.push(`    ${t[expr].ok ? 'PASS' : 'FAIL'}  ${name}: ${expr}`);
    }
    if (th.length) {
        lines.push('  thresholds:');
        lines.push(...th);
    }
    return `${lines.join('\n')}\n\n`;
}

// `export const handleSummary = summaryHandler('userinfo')`: writes the summary JSON to
// SUMMARY_FILE (when set) and prints the plain-text summary.
export function summaryHandler(scenarioName) {
    return function handleSummary(data) {
        const out = { stdout: textSummary(data, scenarioName) };
        if (__ENV.SUMMARY_FILE) out[__ENV.SUMMARY_FILE] = JSON.stringify(data);
        return out;
    };
}
