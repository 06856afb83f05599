// jouleboard ranking in the browser: the same rule and tie-break as jouleboard/rank.py.
// Pure functions, no DOM; runs in browsers (window.jouleboardRank) and in Node (require).
(function (root) {
  "use strict";

  const PERCENTILE_FIELDS = {
    p50: "median_itl_ms", p90: "p90_itl_ms", p95: "p95_itl_ms", p99: "p99_itl_ms",
  };

  // Only the four percentiles: a name every object inherits ("constructor") is an error,
  // not a lookup of a field called "function Object() { [native code] }".
  function latency(config, percentile) {
    if (!Object.hasOwn(PERCENTILE_FIELDS, percentile)) {
      throw new RangeError(`unknown percentile ${String(percentile)}`);
    }
    return config[PERCENTILE_FIELDS[percentile]];
  }

  // Plain code-point order, as Python compares str (not localeCompare).
  function order(a, b) {
    return a < b ? -1 : a > b ? 1 : 0;
  }

  // The documented total order: energy, latency at the percentile, GPU count, then ids.
  function sortKey(c, percentile) {
    return [c.energy_per_token_joules, latency(c, percentile), c.num_gpus, c.model_id,
      c.gpu_model, c.max_num_seqs, c.tensor_parallel, c.expert_parallel, c.data_parallel,
      c.weight_precision, c.repeat, c.source];
  }

  function compare(a, b, percentile) {
    const x = sortKey(a, percentile);
    const y = sortKey(b, percentile);
    for (let i = 0; i < x.length; i += 1) {
      const o = order(x[i], y[i]);
      if (o !== 0) return o;
    }
    return 0;
  }

  // One row per model: its best configuration that meets the deadline and filters.
  // options: {deadlineMs, percentile, gpus, precisions, energyBudget, top}; null = no filter.
  function rank(configs, options) {
    const percentile = options.percentile || "p50";
    const gpus = options.gpus ? new Set(options.gpus) : null;
    const precisions = options.precisions ? new Set(options.precisions) : null;
    const budget = options.energyBudget == null ? null : options.energyBudget;
    const best = new Map();
    for (const c of configs) {
      if (!(latency(c, percentile) <= options.deadlineMs)) continue;
      if (gpus && !gpus.has(c.gpu_model)) continue;
      if (precisions && !precisions.has(c.weight_precision)) continue;
      if (budget !== null && !(c.energy_per_token_joules <= budget)) continue;
      const current = best.get(c.model_id);
      if (!current || compare(c, current, percentile) < 0) best.set(c.model_id, c);
    }
    const rows = Array.from(best.values()).sort((a, b) => compare(a, b, percentile));
    const kept = options.top ? rows.slice(0, options.top) : rows;
    return kept.map((config, i) => ({ rank: i + 1, config }));
  }

  // A model's configurations that none of its others beats on energy and latency.
  function paretoFrontier(configs, percentile) {
    const sorted = configs.slice().sort((a, b) =>
      order(latency(a, percentile), latency(b, percentile)) || compare(a, b, percentile));
    const frontier = [];
    for (const c of sorted) {
      const last = frontier[frontier.length - 1];
      if (!last || c.energy_per_token_joules < last.energy_per_token_joules) frontier.push(c);
    }
    return frontier;
  }

  // Facility electricity (GPU energy x PUE), cost and emissions; see present/footprint.py.
  function footprint(energyJoules, inputs) {
    const kwh = (energyJoules * inputs.pue) / 3.6e6;
    return { kwh, cost: kwh * inputs.pricePerKwh, gramsCo2e: kwh * inputs.gramsCo2ePerKwh };
  }

  // Rows of a task's explore JSON ({columns, rows}) as objects.
  function records(data) {
    return data.rows.map((row) => {
      const record = {};
      data.columns.forEach((name, i) => { record[name] = row[i]; });
      return record;
    });
  }

  const api = { rank, paretoFrontier, footprint, records, latency, PERCENTILE_FIELDS };
  if (typeof module === "object" && module.exports) module.exports = api;
  else root.jouleboardRank = api;
})(typeof self !== "undefined" ? self : this);
