// A task's finding for the reader's view: the rules and words of jouleboard/render/finding.py
// and plan/finding.py, so the sentence and its "what changes it" strip follow the controls
// (kept equal by tests/test_finding_parity.py, which runs both on many views). Pure
// functions, no DOM; the numbers come from the task's explore JSON.
import { show } from "./formats.js";
import { rank } from "./rank.js";
import { deadlineText, latencyValue } from "./wording.js";

// measure/units.py per_thousand: "17 Wh per 1,000 responses", "7.4 kWh per 1,000 videos".
export function perThousand(joulesPerResponse, response) {
  const wh = (joulesPerResponse * 1000) / 3600;
  const amount = wh < 1000 ? `${show("sig2", wh)} Wh` : `${show("sig2", wh / 1000)} kWh`;
  return `${amount} per 1,000 ${response}s`;
}

export function ordinal(n) {
  if (n % 100 >= 10 && n % 100 <= 20) return `${n}th`;
  return `${n}${{ 1: "st", 2: "nd", 3: "rd" }[n % 10] || "th"}`;
}

function rankText(best, worst) {
  return best === worst ? String(best) : `${best}–${worst}`;
}

function place(s, at) {
  if (!s.best) return ordinal(at);
  return s.best === s.worst ? ordinal(s.best) : `${ordinal(s.best)}–${ordinal(s.worst)}`;
}

const tied = (s) => s.best !== s.worst;

function ratio(a, b) {
  return `${show("fixed1", a / b)}×`;
}

function ratioWithInterval(a, b, noise) {
  if (a.u === null || b.u === null || !noise) return ratio(a.efficiency, b.efficiency);
  const r = a.efficiency / b.efficiency;
  const spread = Math.exp(noise.c * Math.hypot(a.u, b.u));
  return `${ratio(a.efficiency, b.efficiency)} (${show("fixed1", r / spread)}–` +
    `${show("fixed1", r * spread)}×)`;
}

function names(models, most = 3) {
  const shown = models.slice(0, most);
  if (models.length > most) shown.push(`${models.length - most} more`);
  return shown.length === 1 ? shown[0]
    : `${shown.slice(0, -1).join(", ")} and ${shown[shown.length - 1]}`;
}

function unlikeOutputs(compared) {
  const byOutput = new Map();
  for (const s of compared) {
    if (!byOutput.has(s.output)) byOutput.set(s.output, []);
    byOutput.get(s.output).push(s.model);
  }
  if (byOutput.size < 2) return "";
  return ` Outputs differ: ${Array.from(byOutput, ([output, models]) =>
    `${names(models, models.length)} at ${output}`).join("; ")}.`;
}

function headlineText(where, ranking, unit, rule, topN, noise) {
  if (!ranking.length) return `On ${where}, no configuration qualifies.`;
  const lead = ranking[0];
  const figure = `${show(rule, lead.efficiency)} ${unit}`;
  const value = lead.relatable ? `${figure} (${lead.relatable})` : figure;
  const lastAt = Math.min(topN, ranking.length);
  const last = ranking[lastAt - 1];
  if (ranking.length === 1) {
    return `On ${where}, ${lead.model} (${lead.config}) does the most work per joule: ` +
      `${value}; it is the only model that qualifies.`;
  }
  if (tied(lead)) {
    const others = ranking.slice(1).filter((s) => s.best === 1);
    const text = `On ${where}, ${lead.model} (${lead.config}) does the most work per joule ` +
      `(${[figure, lead.relatable].filter(Boolean).join(", ")}), but ` +
      `${names(others.map((s) => s.model))} ${others.length === 1 ? "is" : "are"} within ` +
      `measurement noise of it (places ${rankText(1, lead.worst)} shared)`;
    if (last === lead || others.includes(last)) return `${text}.`;
    return `${text}; it does ${ratioWithInterval(lead, last, noise)} the work of ` +
      `${last.model} (${place(last, lastAt)}).`;
  }
  const others = [ranking[1]];
  if (ranking.length > 2 && last !== ranking[1]) others.push(last);
  const beyond = lead.u !== null && noise ? ", beyond measurement noise" : "";
  const at = [2, lastAt];
  return `On ${where}, ${lead.model} (${lead.config}) does the most work per joule` +
    `${beyond}: ${value}, ${others.map((o, i) => `${ratioWithInterval(lead, o, noise)} the ` +
      `work of ${o.model} (${place(o, at[i])})`).join(" and ")}.`;
}

export function headline(where, ranking, unit, rule, topN, noise) {
  const text = headlineText(where, ranking, unit, rule, topN, noise);
  if (ranking.length < 2) return text;
  const lead = ranking[0];
  const last = ranking[Math.min(topN, ranking.length) - 1];
  const named = [lead, ...ranking.slice(1).filter((s) => s.best === 1 && tied(lead)),
    ranking[1], last];
  return text + unlikeOutputs(Array.from(new Set(named)));
}

function sameOrder(a, b) {
  return a.length === b.length &&
    a.every((s, i) => s.model === b[i].model && s.efficiency === b[i].efficiency);
}

function sharesAPlace(a, atA, b, atB) {
  const [lowA, highA] = a.best ? [a.best, a.worst] : [atA, atA];
  const [lowB, highB] = b.best ? [b.best, b.worst] : [atB, atB];
  return lowA <= highB && lowB <= highA;
}

function biggestMove(before, after) {
  const where = new Map(after.map((s, i) => [s.model, [i + 1, s]]));
  let best = null;
  before.forEach((s, i) => {
    const now = where.get(s.model);
    // A range's end moving counts as a move (3rd to 2nd–3rd), as finding.py biggest_move.
    const shift = now === undefined ? Infinity : Math.max(Math.abs(now[0] - (i + 1)),
      Math.abs(now[1].best - s.best), Math.abs(now[1].worst - s.worst));
    if (now !== undefined && place(s, i + 1) === place(now[1], now[0])) return;
    if (shift > 0 && (best === null || shift > best.shift)) {
      best = { shift, model: s.model, was: i + 1, now: now ? now[0] : null,
        wasText: place(s, i + 1), nowText: now ? place(now[1], now[0]) : "",
        overlap: now !== undefined && sharesAPlace(s, i + 1, now[1], now[0]) };
    }
  });
  return best;
}

const capital = (text) => text.slice(0, 1).toUpperCase() + text.slice(1);

function leaderClause(ranking, defaults, unit, rule) {
  if (!ranking.length) return "no model qualifies";
  const lead = ranking[0];
  const value = `${show(rule, lead.efficiency)} ${unit}`;
  const others = tied(lead) ? ranking.slice(1).filter((s) => s.best === 1).map((s) => s.model)
    : [];
  const within = others.length ? `, within measurement noise of ${names(others)}` : "";
  if (defaults.length && lead.model === defaults[0].model) {
    return `${lead.model} still leads, with ${value}${within}`;
  }
  return `${lead.model} leads (${lead.config}), with ${value}${within}`;
}

function moveClause(defaults, other, unit, rule) {
  const move = biggestMove(defaults, other);
  if (move === null) {
    const shown = new Set(defaults.map((s) => s.model));
    const joined = other.map((s, i) => [i + 1, s]).filter(([, s]) => !shown.has(s.model));
    if (joined.length) {
      const [at, s] = joined[0];
      const more = joined.length > 1 ? ` (and ${joined.length - 1} more)` : "";
      return `${s.model} joins at ${place(s, at)}${more}`;
    }
    const now = new Map(other.map((s) => [s.model, s]));
    const changed = defaults.slice(1).filter((a) => now.has(a.model) &&
      a.efficiency !== now.get(a.model).efficiency).map((a) => [a, now.get(a.model)]);
    if (!changed.length) return "the places are unchanged";
    const size = ([a, b]) => Math.abs(b.efficiency / a.efficiency - 1);
    const [a, b] = changed.reduce((x, y) => (size(y) > size(x) ? y : x));
    return `the places hold, but ${a.model} goes from ${show(rule, a.efficiency)} to ` +
      `${show(rule, b.efficiency)} ${unit}`;
  }
  if (move.now === null) return `${move.model} drops out`;
  const way = move.overlap ? "moves" : move.now < move.was ? "rises" : "falls";
  return `${move.model} ${way} from ${move.wasText} to ${move.nowText}`;
}

function bindingText(deadline, unbounded, defaults, unit, rule) {
  if (sameOrder(unbounded, defaults)) {
    return `The ${deadline} deadline does not bind: with no deadline at all the ranking is ` +
      "identical.";
  }
  return `The ${deadline} deadline binds: with no deadline, ` +
    `${leaderClause(unbounded, defaults, unit, rule)}; ` +
    `${moveClause(defaults, unbounded, unit, rule)}.`;
}

// render/finding.py finding: the headline and the strip.
export function finding(where, deadline, defaults, unbounded, tighter, gpus, precisions, unit,
  rule, topN, noise) {
  const changes = [bindingText(deadline, unbounded, defaults, unit, rule)];
  if (tighter) {
    changes.push(`${capital(tighter.label)}: ${leaderClause(tighter.ranking, defaults, unit,
      rule)}; ${moveClause(defaults, tighter.ranking, unit, rule)}.`);
  }
  for (const group of [gpus, precisions]) {
    if (group.length > 1) {
      for (const s of group) {
        changes.push(`${capital(s.label)}: ${leaderClause(s.ranking, defaults, unit, rule)}.`);
      }
    }
  }
  return { sentence: headline(where, defaults, unit, rule, topN, noise), changes };
}

// plan/finding.py where_text.
function whereText(data, view) {
  const f = data.finding;
  let text = `${f.task}, with ${deadlineText(view.ms, view.percentile, data.latency)}`;
  const defaults = f.default_gpus;
  const same = view.gpus.length === defaults.length && view.gpus.every((g) => defaults.includes(g));
  if (!same) text += `, on ${view.gpus.slice().sort().join(" and ") || "no GPU"}`;
  if (view.precisions !== null) {
    const shown = view.precisions.slice().sort().map((p) => data.precisions[p] || p.toUpperCase());
    text += `, ${shown.join(", ") || "no precision"} only`;
  }
  if (view.budget !== null) {
    // Python's {:g}: six significant digits, no trailing zeros; in the budget box's unit.
    const budget = +(Number(view.budget) / data.units.scale_joules).toPrecision(6);
    text += `, at most ${budget} ${data.units.energy_scaled_label}`;
  }
  return text;
}

// plan/finding.py standings: each ranked row as the finding reads it.
function standings(data, rows) {
  const s = data.noise ? data.noise.s : null;
  return rows.map((r) => {
    const c = r.config;
    return {
      model: data.models[c.model_id].nickname,
      config: `${data.precisions[c.weight_precision] || c.weight_precision}, ` +
        `${c.num_gpus}× ${c.gpu_model}`,
      efficiency: c.efficiency,
      best: r.rankBest,
      worst: r.rankWorst,
      u: s === null ? null : s / Math.sqrt(c.runs || 1),
      output: c.output || "",
      relatable: perThousand(c.energy_per_response_joules, data.units.response),
    };
  });
}

// plan/finding.py task_finding for `view`: {ms, percentile, gpus, precisions (null: all),
// budget (null: none)}.
export function viewFinding(data, view) {
  const f = data.finding;
  const at = (ms = view.ms, gpus = view.gpus, precisions = view.precisions) => standings(data,
    rank(data.configs, { deadlineMs: ms, percentile: view.percentile, gpus, precisions,
      energyBudget: view.budget, order: data.order, noise: data.noise }));
  const lower = f.presets.filter((ms) => ms < view.ms);
  const tighter = lower.length ? { label: `at ${latencyValue(Math.min(...lower), data.latency)}`,
    ranking: at(Math.min(...lower)) } : null;
  const allGpus = Array.from(new Set(data.configs.map((c) => c.gpu_model))).sort();
  const byGpu = allGpus.map((g) => ({ label: `on ${g} alone`, ranking: at(view.ms, [g]) }));
  let precisions = new Set(data.configs.filter((c) => view.gpus.includes(c.gpu_model))
    .map((c) => c.weight_precision));
  if (view.precisions !== null) {
    precisions = new Set(Array.from(precisions).filter((p) => view.precisions.includes(p)));
  }
  const byPrecision = Array.from(precisions).sort().map((p) => ({
    label: `${data.precisions[p] || p.toUpperCase()} only`, ranking: at(view.ms, view.gpus, [p]),
  }));
  return finding(whereText(data, view), latencyValue(view.ms, data.latency), at(),
    at(Infinity), tighter, byGpu, byPrecision, data.units.efficiency_unit_lower,
    data.units.efficiency_show, f.top, data.noise);
}
