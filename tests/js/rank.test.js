// Unit tests of templates/assets/js/rank.js under Node's test runner (node --test tests/js/).
"use strict";
const test = require("node:test");
const assert = require("node:assert/strict");
const path = require("node:path");
const fs = require("node:fs");
const { modules } = require("./modules.js");

let R;
test.before(async () => { R = await modules("rank.js"); });
const CASES = JSON.parse(fs.readFileSync(path.join(__dirname, "..", "ranking_cases.json")));

// The configurations and options of a shared case, as the page passes them to rank.js.
function prepare(c) {
  const kind = c.kind || "token";
  const defaults = kind === "token" ? CASES.defaults : CASES[`${kind}_defaults`];
  const configs = c.configs.map((fields) => {
    const config = { ...defaults, ...fields };
    // rank.py's token test records default J/response to J/token x 1000 tokens.
    if (kind === "token" && config.energy_per_response_joules === undefined) {
      config.energy_per_response_joules = config.energy_per_token_joules * 1000;
    }
    return config;
  });
  return { configs, options: {
    deadlineMs: c.deadline_ms, percentile: c.percentile, gpus: c.gpus || null,
    precisions: c.precisions || null, energyBudget: c.energy_budget ?? null, top: c.top || null,
    order: CASES.orders[kind], objective: c.objective || "energy_per_token",
    accuracy: c.accuracy || {}, noise: c.noise || null,
  } };
}

for (const c of CASES.cases) {
  test(`shared ranking case: ${c.name}`, () => {
    const { configs, options } = prepare(c);
    const rows = R.rank(configs, options);
    assert.deepEqual(rows.map((r) => r.config.source), c.expected);
    assert.deepEqual(rows.map((r) => r.rank), c.expected.map((_, i) => i + 1));
    const exact = c.expected.map((_, i) => [i + 1, i + 1]);
    assert.deepEqual(rows.map((r) => [r.rankBest, r.rankWorst]), c.expected_ranges || exact);
  });
}

for (const x of CASES.separation) {
  test(`runs that would separate two configurations at ratio ${x.ratio}`, () => {
    assert.equal(R.runsToSeparate(x.ratio, { s: x.s, c: x.c }), x.runs);
  });
}

test("footprint: hand-computed", () => {
  // 0.1 J/token x 1e6 tokens = 1e5 J; x PUE 1.2 = 1.2e5 J = 1/30 kWh.
  const f = R.footprint(0.1 * 1e6, { pue: 1.2, pricePerKwh: 0.3, gramsCo2ePerKwh: 450 });
  assert.ok(Math.abs(f.kwh - 1 / 30) < 1e-15);
  assert.ok(Math.abs(f.cost - 0.01) < 1e-15);
  assert.ok(Math.abs(f.gramsCo2e - 15) < 1e-12);
});

test("pareto frontier: dominated and tied points are dropped", () => {
  const mk = (source, e, l) => ({ ...CASES.defaults, source, energy_per_token_joules: e,
    median_itl_ms: l });
  const pts = [mk("c", 0.1, 80), mk("dominated", 0.4, 25), mk("a", 0.5, 10), mk("b", 0.3, 20),
    mk("tie-slower", 0.1, 90)];
  assert.deepEqual(R.paretoFrontier(pts, "p50").map((c) => c.source), ["a", "b", "c"]);
});

test("records turns columns and rows into objects", () => {
  const data = { columns: ["a", "b"], rows: [[1, "x"], [2, "y"]] };
  assert.deepEqual(R.records(data), [{ a: 1, b: "x" }, { a: 2, b: "y" }]);
});
