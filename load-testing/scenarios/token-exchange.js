// token-exchange: POST /token grant_type=urn:ietf:params:oauth:grant-type:token-exchange
// (RFC 8693) with HTTP Basic client auth. Iteration i uses case i % len, audience i % 20,
// resource i % 10, scope i % 4 of the seed; success = status == case.expect (200 or 400).
import http from 'k6/http';
import { check } from 'k6';
import exec from 'k6/execution';
import * as presets from '../lib/presets.js';
import { BASE_URL, TOKEN_TYPE_ACCESS_TOKEN, basicAuth, loadSeed, record, summaryHandler } from '../lib/common.js';

export const options = presets.options(__ENV.PRESET || 'smoke', Number(__ENV.DURATION_SCALE || 1));

const GRANT_TYPE = 'urn:ietf:params:oauth:grant-type:token-exchange';
const seed = loadSeed(['client_id', 'client_secret', 'audiences', 'resources', 'scopes', 'cases']);
const AUTH = basicAuth(seed.client_id, seed.client_secret);
const PARAMS = { headers: { Authorization: AUTH } };

// The expected 400s are not HTTP failures here.
http.setResponseCallback(http.expectedStatuses(200, 400));

export default function () {
    const i = exec.scenario.iterationInTest;
    const c = seed.cases[i % seed.cases.length];
    const form = {
        grant_type: GRANT_TYPE,
        subject_token: c.subject_token,
        subject_token_type: TOKEN_TYPE_ACCESS_TOKEN,
        audience: seed.audiences[i % seed.audiences.length],
        resource: seed.resources[i % seed.resources.length],
        scope: seed.scopes[i % seed.scopes.length],
    };
    if (c.actor_token) {
        form.actor_token = c.actor_token;
        form.actor_token_type = TOKEN_TYPE_ACCESS_TOKEN;
    }
    const res = http.post(`${BASE_URL}/token`, form, PARAMS);
    const ok = check(res, {
        'status is the expected one': (r) => r.status === c.expect,
        'a 200 carries an access_token': (r) => r.status !== 200 || (r.json('access_token') || '') !== '',
    });
    record(ok);
}

export const handleSummary = summaryHandler('token-exchange');
