// refresh-rotation: POST /token grant_type=refresh_token with HTTP Basic client auth. VU v
// (1-based) owns the family tokens[(v-1) % len] and always presents the latest refresh token
// of it (rotation: every use returns a new one; reusing a superseded one revokes the family).
// Success = 200 and a new refresh_token.
import http from 'k6/http';
import { check } from 'k6';
import * as presets from '../lib/presets.js';
import { BASE_URL, basicAuth, jsonBody, loadSeed, record, summaryHandler } from '../lib/common.js';

const PRESET = __ENV.PRESET || 'smoke';
export const options = presets.options(PRESET, Number(__ENV.DURATION_SCALE || 1));

const seed = loadSeed(['client_id', 'client_secret', 'tokens']);
const PARAMS = { headers: { Authorization: basicAuth(seed.client_id, seed.client_secret) } };

// This VU's current refresh token (VU-global: survives across iterations and scenarios).
let current = null;

export function setup() {
    const need = presets.maxVUs(PRESET);
    if (seed.tokens.length < need) {
        console.warn(`refresh-rotation: ${seed.tokens.length} families seeded but preset ${PRESET} may use up to ${need} VUs; VUs sharing a family will trip theft detection`);
    }
}

export default function () {
    if (current === null) current = seed.tokens[(__VU - 1) % seed.tokens.length];
    const res = http.post(`${BASE_URL}/token`, { grant_type: 'refresh_token', refresh_token: current }, PARAMS);
    const body = res.status === 200 ? jsonBody(res) : null;
    const next = body && typeof body.refresh_token === 'string' ? body.refresh_token : '';
    const ok = check(res, {
        'status is 200': (r) => r.status === 200,
        'a new refresh_token': () => next !== '' && next !== current,
    });
    if (next !== '') current = next;
    record(ok);
}

export const handleSummary = summaryHandler('refresh-rotation');
