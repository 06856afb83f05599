// jouleboard ranking in the browser: the same rule and tie-break as jouleboard/rank/ranking.py.
// Pure functions, no DOM (the Node tests import them too). Nothing here knows a kind of
// task: the order descriptor (a task's explore JSON "order", from TaskKind.browser_order)
// names the fields its latency, tie-break and energy come from.

// Token tasks' order: the default, so a bare list of LLM configurations ranks as before.
const TOKEN_ORDER = {
  latency: { p50: ["median_itl_ms", 1], p90: ["p90_itl_ms", 1], p95: ["p95_itl_ms", 1],
    p99: ["p99_itl_ms", 1] },
  tie: ["max_num_seqs", "tensor_parallel", "expert_parallel", "data_parallel",
    "weight_precision", "repeat", "source"],
  energy: "energy_per_token_joules",
  response: "energy_per_response_joules",
};

// latency_ms(percentile) of rank.py: a field, times a factor (1000 for seconds). Only
// the order's percentiles: a name every object inherits ("constructor") is an error,
// not a lookup of a field called "function Object() { [native code] }".
export function latency(config, percentile, order = TOKEN_ORDER) {
  if (!Object.hasOwn(order.latency, percentile)) {
    throw new RangeError(`unknown percentile ${String(percentile)}`);
  }
  const [field, factor] = order.latency[percentile];
  return factor === 1 ? config[field] : config[field] * factor;
}

// Plain code-point order, as Python compares str (not localeCompare).
function order(a, b) {
  return a < b ? -1 : a > b ? 1 : 0;
}

// The objective a ranking minimises (rank.py objective_for); Infinity = cannot be ranked.
function objective(options, ord) {
  const by = options.objective || "energy_per_token";
  if (by === "energy_per_token") return (c) => c[ord.energy];
  if (by === "energy_per_response") return (c) => c[ord.response];
  if (by === "energy_per_correct_answer") {
    const accuracy = options.accuracy || {};
    return (c) => (accuracy[c.model_id] === undefined ? Infinity
      : c[ord.response] / (accuracy[c.model_id] / 100));
  }
  throw new Error(`unknown ranking metric ${by}`);
}

// The documented total order: objective, latency at the percentile, GPU count, model,
// GPU, then the kind's tie-break fields (a missing value counts as 0, as in tie_break()).
function sortKey(c, percentile, ord, value) {
  return [value(c), latency(c, percentile, ord), c.num_gpus, c.model_id, c.gpu_model,
    ...ord.tie.map((field) => c[field] ?? 0)];
}

function compareKeys(x, y) {
  for (let i = 0; i < x.length; i += 1) {
    const o = order(x[i], y[i]);
    if (o !== 0) return o;
  }
  return 0;
}

// The places measurement noise allows each of values (best first, lower is better), as
// rank/noise.py rank_ranges: with u = s / sqrt(runs), j is surely better than i when
// ln(E_i / E_j) > c sqrt(u_i^2 + u_j^2); best = 1 + #surely better, worst = N - #surely
// worse. noise: {s, c}, c the critical value Python chose (Student's t from the repeats'
// degrees of freedom, or the normal quantile), or null when unknown (the exact places).
function rankRanges(values, runs, noise) {
  const n = values.length;
  if (!noise) return values.map((_, i) => [i + 1, i + 1]);
  return values.map((v, i) => {
    let better = 0;
    let worse = 0;
    values.forEach((w, j) => {
      if (j === i) return;
      if (surelyLower(w, runs[j], v, runs[i], noise)) better += 1;
      if (surelyLower(v, runs[i], w, runs[j], noise)) worse += 1;
    });
    return [1 + better, n - worse];
  });
}

// [v exp(-c u), v exp(c u)] with u = s / sqrt(runs) (Noise.interval); [v, v] when unknown.
export function interval(value, runs, noise) {
  if (!noise) return [value, value];
  const spread = Math.exp(noise.c * (noise.s / Math.sqrt(runs)));
  return [value / spread, value * spread];
}

// How many runs of each of two configurations whose energies stand at `ratio` would
// separate them if their point values held: the least n with n > 2 (c s / ln ratio)^2
// (Noise.runs_to_separate); null when the noise is unknown or the ratio is 1.
export function runsToSeparate(ratio, noise) {
  if (!noise || !(ratio > 0) || ratio === 1) return null;
  const t = (noise.c * noise.s) / Math.log(ratio);
  const need = 2 * t * t;
  return Math.max(1, Math.floor(need) + 1);
}

// a (measured runsA times) is lower than b beyond the noise (Noise.surely_lower).
export function surelyLower(a, runsA, b, runsB, noise) {
  const ua = noise.s / Math.sqrt(runsA);
  const ub = noise.s / Math.sqrt(runsB);
  return Math.log(b / a) > noise.c * Math.hypot(ua, ub);
}

// One row per model: its best configuration that meets the deadline and filters, with
// the places the noise allows it (rankBest..rankWorst, counted over every qualifying model).
// options: {deadlineMs, percentile, gpus, precisions, energyBudget, top, order, objective,
// accuracy, noise}; null = no filter (noise null: unknown).
export function rank(configs, options) {
  const percentile = options.percentile || "p50";
  const ord = options.order || TOKEN_ORDER;
  const value = objective(options, ord);
  const gpus = options.gpus ? new Set(options.gpus) : null;
  const precisions = options.precisions ? new Set(options.precisions) : null;
  const budget = options.energyBudget == null ? null : options.energyBudget;
  const best = new Map();
  for (const c of configs) {
    if (!(latency(c, percentile, ord) <= options.deadlineMs)) continue;
    if (gpus && !gpus.has(c.gpu_model)) continue;
    if (precisions && !precisions.has(c.weight_precision)) continue;
    if (budget !== null && !(c[ord.energy] <= budget)) continue;
    if (!Number.isFinite(value(c))) continue;
    const key = sortKey(c, percentile, ord, value);
    const current = best.get(c.model_id);
    if (!current || compareKeys(key, current.key) < 0) best.set(c.model_id, { c, key });
  }
  const rows = Array.from(best.values()).sort((a, b) => compareKeys(a.key, b.key));
  const ranges = rankRanges(rows.map((entry) => entry.key[0]),
    rows.map((entry) => entry.c.runs || 1), options.noise || null);
  const ranked = rows.map((entry, i) => ({ rank: i + 1, config: entry.c,
    rankBest: ranges[i][0], rankWorst: ranges[i][1] }));
  return options.top ? ranked.slice(0, options.top) : ranked;
}

// A model's configurations that none of its others beats on energy and latency.
export function paretoFrontier(configs, percentile, ord = TOKEN_ORDER) {
  const value = (c) => c[ord.energy];
  const key = (c) => [latency(c, percentile, ord), ...sortKey(c, percentile, ord, value)];
  const sorted = configs.slice().sort((a, b) => compareKeys(key(a), key(b)));
  const frontier = [];
  for (const c of sorted) {
    const last = frontier[frontier.length - 1];
    if (!last || c[ord.energy] < last[ord.energy]) frontier.push(c);
  }
  return frontier;
}

// Facility electricity (GPU energy x PUE), cost and emissions; see render/footprint.py.
export function footprint(energyJoules, inputs) {
  const kwh = (energyJoules * inputs.pue) / 3.6e6;
  return { kwh, cost: kwh * inputs.pricePerKwh, gramsCo2e: kwh * inputs.gramsCo2ePerKwh };
}

// Rows of a task's explore JSON ({columns, rows}) as objects.
export function records(data) {
  return data.rows.map((row) => {
    const record = {};
    data.columns.forEach((name, i) => { record[name] = row[i]; });
    return record;
  });
}
