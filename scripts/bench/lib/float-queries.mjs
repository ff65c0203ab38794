// The float bench's S4 queries as request paths, in one place: bench.mjs times them beside
// VictoriaMetrics' equivalents, kept-queries.mjs against a server restarted on a kept data dir.

export const METRIC = 'bench.value';

function s4Query(params) {
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) for (const x of [v].flat()) p.append(k, String(x));
  return p.toString();
}

/** `sensor`: the one sensor of Q1, Q3 and X1; `day`: the data's range; `hour`: Q2's ({from, to} each). */
export function s4Paths({ sensor, day, hour }) {
  const one = { metric: METRIC, tag: `sensor:${sensor}`, ...day };
  return {
    Q1: { msgpack: `/v1/query?${s4Query({ ...one, format: 'msgpack' })}`, json: `/v1/query?${s4Query({ ...one, format: 'json' })}` },
    Q2: { msgpack: `/v1/query?${s4Query({ metric: METRIC, ...hour, format: 'msgpack' })}`, json: `/v1/query?${s4Query({ metric: METRIC, ...hour, format: 'json' })}` },
    Q3: `/v1/query?${s4Query({ ...one, step: '1m', agg: 'avg,min,max' })}`,
    Q4: `/v1/query?${s4Query({ metric: METRIC, ...day, step: '1h', agg: 'avg' })}`,
    Q5: `/v1/latest?${s4Query({ metric: METRIC })}`,
    X1: `/v1/query?${s4Query({ ...one, maxPoints: 1000 })}`,
  };
}
