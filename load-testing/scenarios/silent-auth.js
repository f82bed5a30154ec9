// silent-auth: GET /authorize?response_type=code&client_id&redirect_uri&scope=openid&prompt=none
// with Cookie: authrim_session=<cookie> (iteration i uses cookies[i % len]), redirects not
// followed. Success = 302 with `code=` in Location.
import http from 'k6/http';
import { check } from 'k6';
import exec from 'k6/execution';
import * as presets from '../lib/presets.js';
import { BASE_URL, loadSeed, record, summaryHandler } from '../lib/common.js';

export const options = presets.options(__ENV.PRESET || 'smoke', Number(__ENV.DURATION_SCALE || 1));

const seed = loadSeed(['client_id', 'redirect_uri', 'cookies']);
const URL = `${BASE_URL}/authorize?response_type=code&client_id=${encodeURIComponent(seed.client_id)}` +
    `&redirect_uri=${encodeURIComponent(seed.redirect_uri)}&scope=openid&prompt=none`;

export default function () {
    const cookie = seed.cookies[exec.scenario.iterationInTest % seed.cookies.length];
    // Only the seeded session: the VU's cookie jar is not used.
    const res = http.get(URL, { headers: { Cookie: `authrim_session=${cookie}` }, redirects: 0, jar: new http.CookieJar() });
    const ok = check(res, {
        'status is 302': (r) => r.status === 302,
        'Location has code=': (r) => /[?&#]code=/.test(r.headers.Location || r.headers.location || ''),
    });
    record(ok);
}

export const handleSummary = summaryHandler('silent-auth');
