// Arrival-rate presets shared by every scenario (see load-testing/CONTRACT.md, "Presets").
//
// Every preset has two scenarios, both running the script's default function:
//   warmup     constant-arrival-rate (50/s, or N/s when N < 50) for 30 s
//   benchmark  ramping-arrival-rate 0 -> N/2 (15 s) -> N (180 s) -> 0 (15 s), starting when
//              the warm-up ends
// as in the reference system's load-test reports, with fewer VUs because a
// local server answers in milliseconds. `smoke` is a few seconds at 5-10/s to check a setup.
// DURATION_SCALE multiplies every duration (warm-up, stages, benchmark start time).

export const PRESETS = ['smoke', 'rps50', 'rps100', 'rps200', 'rps300', 'rps500', 'rps1000', 'rps1500', 'rps2000', 'rps2500', 'rps3000', 'rps4000'];

// VUs of the warm-up scenario (its rate is at most 50/s).
const WARMUP_PREALLOCATED_VUS = 10;
const WARMUP_MAX_VUS = 20;

// The shape of a preset, durations in seconds (before DURATION_SCALE).
function plan(preset) {
    if (preset === 'smoke') {
        return {
            rate: 10,
            warmup: { rate: 5, seconds: 2 },
            stages: [
                { target: 10, seconds: 1 },
                { target: 10, seconds: 4 },
            ],
        };
    }
    const m = /^rps(\d+)$/.exec(String(preset));
    if (!m || !PRESETS.includes(preset)) {
        throw new Error(`unknown preset ${JSON.stringify(preset)}; expected one of: ${PRESETS.join(', ')}`);
    }
    const n = Number(m[1]);
    return {
        rate: n,
        warmup: { rate: Math.min(50, n), seconds: 30 },
        stages: [
            { target: Math.round(n / 2), seconds: 15 },
            { target: n, seconds: 180 },
            { target: 0, seconds: 15 },
        ],
    };
}

function checkScale(durationScale) {
    const s = durationScale === undefined || durationScale === null || durationScale === '' ? 1 : Number(durationScale);
    if (!Number.isFinite(s) || s <= 0) {
        throw new Error(`DURATION_SCALE must be a positive number, got ${JSON.stringify(durationScale)}`);
    }
    return s;
}

// k6 duration string for `seconds * scale`, in whole milliseconds (at least 1 ms).
function duration(seconds, scale) {
    return `${Math.max(1, Math.round(seconds * scale * 1000))}ms`;
}

function benchmarkVUs(rate) {
    return {
        preAllocatedVUs: Math.max(10, Math.ceil((rate * 1.2) / 10)),
        maxVUs: Math.max(20, Math.ceil((rate * 1.5) / 10)),
    };
}

// k6 `options` for a preset.
export function options(preset, durationScale) {
    const scale = checkScale(durationScale);
    const p = plan(preset);
    const vus = benchmarkVUs(p.rate);
    return {
        scenarios: {
            warmup: {
                executor: 'constant-arrival-rate',
                rate: p.warmup.rate,
                timeUnit: '1s',
                duration: duration(p.warmup.seconds, scale),
                preAllocatedVUs: WARMUP_PREALLOCATED_VUS,
                maxVUs: WARMUP_MAX_VUS,
                exec: 'default',
            },
            benchmark: {
                executor: 'ramping-arrival-rate',
                startRate: 0,
                timeUnit: '1s',
                preAllocatedVUs: vus.preAllocatedVUs,
                maxVUs: vus.maxVUs,
                stages: p.stages.map((s) => ({ target: s.target, duration: duration(s.seconds, scale) })),
                startTime: duration(p.warmup.seconds, scale),
                exec: 'default',
            },
        },
        thresholds: {
            // "failed" = the scenario's own success check failed (not only HTTP errors).
            'scenario_success{scenario:benchmark}': ['rate>0.99'],
            'http_req_duration{scenario:benchmark}': ['p(95)<300'],
            // No limit: only makes the benchmark-only request count appear in the summary.
            'http_reqs{scenario:benchmark}': ['count>=0'],
        },
        summaryTrendStats: ['avg', 'min', 'med', 'max', 'p(50)', 'p(90)', 'p(95)', 'p(99)', 'count'],
    };
}

// The most VUs a run of the preset can use at once (warm-up and benchmark may overlap while the
// warm-up's last iterations finish): refresh-rotation needs at least this many token families.
export function maxVUs(preset) {
    return WARMUP_MAX_VUS + benchmarkVUs(plan(preset).rate).maxVUs;
}

// Iterations each scenario will start (for seeding codes): rate x time, stages integrated.
export function expectedIterations(preset, durationScale) {
    const scale = checkScale(durationScale);
    const p = plan(preset);
    let prev = 0;
    let bench = 0;
    for (const s of p.stages) {
        bench += ((prev + s.target) / 2) * s.seconds * scale;
        prev = s.target;
    }
    return { warmup: Math.ceil(p.warmup.rate * p.warmup.seconds * scale), benchmark: Math.ceil(bench) };
}
