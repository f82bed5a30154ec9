// userinfo: GET /userinfo with Authorization: Bearer <token>; iteration i uses tokens[i % len].
// Success = 200 and a body with `sub`.
import http from 'k6/http';
import { check } from 'k6';
import exec from 'k6/execution';
import * as presets from '../lib/presets.js';
import { BASE_URL, jsonBody, loadSeed, record, summaryHandler } from '../lib/common.js';

export const options = presets.options(__ENV.PRESET || 'smoke', Number(__ENV.DURATION_SCALE || 1));

const seed = loadSeed(['tokens']);

export default function () {
    const token = seed.tokens[exec.scenario.iterationInTest % seed.tokens.length];
    const res = http.get(`${BASE_URL}/userinfo`, { headers: { Authorization: `Bearer ${token}` } });
    const ok = check(res, {
        'status is 200': (r) => r.status === 200,
        'body has sub': (r) => {
            const b = jsonBody(r);
            return b !== null && typeof b.sub === 'string' && b.sub !== '';
        },
    });
    record(ok);
}

export const handleSummary = summaryHandler('userinfo');
