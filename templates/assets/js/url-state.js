// Every view lives in the URL: these read a query string into a page's state (each value
// checked against what the page offers) and write the state back.

// A URL value may only select an object's own key: "constructor", "__proto__" or
// "toString" name something every object inherits, and must fall back to the default.
export function ownKey(object, key) {
  return typeof key === "string" && object != null && Object.hasOwn(object, key);
}

// One of `allowed` (the page's own choices), else `fallback`.
function choiceParam(params, name, allowed, fallback) {
  const value = params.get(name);
  return allowed.includes(value) ? value : fallback;
}

function numberParam(params, name, fallback, valid) {
  const value = Number(params.get(name));
  return params.has(name) && Number.isFinite(value) && valid(value) ? value : fallback;
}

// An empty value is a choice (nothing ticked); a value naming nothing offered is not.
function listParam(params, name, allowed, fallback) {
  if (!params.has(name)) return fallback;
  const given = params.get(name).split(",").filter(Boolean);
  const kept = given.filter((v) => allowed.includes(v));
  return given.length && !kept.length ? fallback : kept;
}

// ?deadline= in the unit of the page's deadline box: a bare number on ms pages (300), the
// number and its unit where the box shows seconds (60s). Links from before seconds were
// written this way held ms as a bare number; a bare number still reads as ms, so they
// keep their view (deadlineParam).
export function deadlineValue(ms, latency) {
  if (!latency || latency.scale === 1) return String(ms);
  return `${+(ms / latency.scale).toPrecision(12)}${latency.unit}`;
}

// A ?deadline= value in ms: "300" and "300ms" are ms, "60s" seconds; null if it is none.
export function deadlineParam(text) {
  const found = /^\s*(\d+(?:\.\d*)?(?:e[+-]?\d+)?|\.\d+)\s*(ms|s)?\s*$/i.exec(text || "");
  if (!found) return null;
  const ms = Number(found[1]) * (found[2] && found[2].toLowerCase() === "s" ? 1000 : 1);
  return Number.isFinite(ms) && ms > 0 ? ms : null;
}

// The calculator's inputs: price and CO2 from 0, PUE from 1.
function calculatorState(params, defaults) {
  return {
    price: numberParam(params, "price", defaults.price, (v) => v >= 0),
    pue: numberParam(params, "pue", defaults.pue, (v) => v >= 1),
    co2: numberParam(params, "co2", defaults.co2, (v) => v >= 0),
  };
}

// The task page's view from a query string; `choices` lists the percentiles, GPUs and
// precisions the page offers and whether it has a calculator.
export function taskState(search, defaults, choices) {
  const p = new URLSearchParams(search);
  const sort = p.get("sort") || "";
  return {
    deadline: deadlineParam(p.get("deadline")) ?? defaults.deadline,
    pct: choiceParam(p, "pct", choices.percentiles, defaults.pct),
    gpu: listParam(p, "gpu", choices.gpus, defaults.gpu),
    precision: listParam(p, "precision", choices.precisions, defaults.precision),
    budget: p.has("budget") && Number(p.get("budget")) > 0 ? p.get("budget") : "",
    q: p.get("q") || "",
    sort: /^\d+\.(ascending|descending)$/.test(sort) ? sort : "",
    ...(choices.calculator ? calculatorState(p, defaults) : {}),
  };
}

// The compare page's view: `tasks` maps task ids to {deadline, pct, percentiles}; `first`
// is the default.
export function compareState(search, tasks, first, defaults, max) {
  const p = new URLSearchParams(search);
  const task = ownKey(tasks, p.get("task")) ? p.get("task") : first;
  return {
    task,
    models: (p.get("models") || "").split(",").filter(Boolean).slice(0, max),
    deadline: deadlineParam(p.get("deadline")) ?? tasks[task].deadline,
    pct: choiceParam(p, "pct", tasks[task].percentiles, tasks[task].pct),
    // GPUs the view keeps to (none: any), as a task page's link gives them; checked against
    // the task's own once its data is loaded.
    gpu: (p.get("gpu") || "").split(",").filter(Boolean),
    ...(defaults.price !== undefined ? calculatorState(p, defaults) : {}),
  };
}

// The settings an embedded chart's view carries (embed-view.js draws it again).
export const EMBED_KEYS = ["deadline", "pct", "gpu", "precision", "budget"];

// The query string of `state`: only what differs from the defaults ("" when nothing does),
// and of `keys` only when given. `latency` ({scale, unit}) is the deadline box's unit.
export function viewQuery(state, defaults, latency, keys = Object.keys(state)) {
  const params = new URLSearchParams();
  for (const key of keys) {
    const value = state[key];
    const shown = (v) => (key === "deadline" ? deadlineValue(v, latency) : v);
    const text = Array.isArray(value) ? value.join(",") : String(shown(value) ?? "");
    const fallback = defaults[key];
    const base = Array.isArray(fallback) ? fallback.join(",") : String(shown(fallback) ?? "");
    if (text !== base) params.set(key, text);
  }
  const query = params.toString();
  return query ? `?${query}` : "";
}

// The state into the address bar: only what differs from the defaults; `push` makes a
// history entry, else the current one is replaced. `latency` ({scale, unit}) is the
// deadline box's unit.
export function writeUrl(state, defaults, push, latency) {
  const url = `${location.pathname}${viewQuery(state, defaults, latency)}${location.hash}`;
  if (url === `${location.pathname}${location.search}${location.hash}`) return;
  if (push) history.pushState(null, "", url);
  else history.replaceState(null, "", url);
}
