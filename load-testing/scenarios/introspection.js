// introspection: POST /introspect token=<token> with HTTP Basic client auth; iteration i uses
// tokens[i % len]. Success = 200 and body.active == true.
import http from 'k6/http';
import { check } from 'k6';
import exec from 'k6/execution';
import * as presets from '../lib/presets.js';
import { BASE_URL, basicAuth, jsonBody, loadSeed, record, summaryHandler } from '../lib/common.js';

export const options = presets.options(__ENV.PRESET || 'smoke', Number(__ENV.DURATION_SCALE || 1));

const seed = loadSeed(['client_id', 'client_secret', 'tokens']);
const PARAMS = { headers: { Authorization: basicAuth(seed.client_id, seed.client_secret) } };

export default function () {
    const token = seed.tokens[exec.scenario.iterationInTest % seed.tokens.length];
    const res = http.post(`${BASE_URL}/introspect`, { token }, PARAMS);
    const ok = check(res, {
        'status is 200': (r) => r.status === 200,
        'active is true': (r) => {
            const b = jsonBody(r);
            return b !== null && b.active === true;
        },
    });
    record(ok);
}

export const handleSummary = summaryHandler('introspection');
