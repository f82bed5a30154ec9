// authorization-code: POST /token grant_type=authorization_code with HTTP Basic client auth;
// every iteration redeems a code nobody used before: the warm-up takes codes from the end of
// the seed backwards, the benchmark from the start forwards. Success = 200.
import http from 'k6/http';
import { check } from 'k6';
import exec from 'k6/execution';
import * as presets from '../lib/presets.js';
import { BASE_URL, basicAuth, loadSeed, record, summaryHandler } from '../lib/common.js';

export const options = presets.options(__ENV.PRESET || 'smoke', Number(__ENV.DURATION_SCALE || 1));

const seed = loadSeed(['client_id', 'client_secret', 'redirect_uri', 'codes']);
const PARAMS = { headers: { Authorization: basicAuth(seed.client_id, seed.client_secret) } };

function codeIndex() {
    const n = exec.scenario.iterationInTest;
    return exec.scenario.name === 'warmup' ? seed.codes.length - 1 - n : n;
}

export default function () {
    const idx = codeIndex();
    if (idx < 0 || idx >= seed.codes.length) {
        // Ran out of codes (or the warm-up and the benchmark met): seed more.
        check(null, { 'an unused code is left': () => false });
        record(false);
        return;
    }
    const form = { grant_type: 'authorization_code', code: seed.codes[idx], redirect_uri: seed.redirect_uri };
    const res = http.post(`${BASE_URL}/token`, form, PARAMS);
    const ok = check(res, {
        'status is 200': (r) => r.status === 200,
    });
    record(ok);
}

export const handleSummary = summaryHandler('authorization-code');
