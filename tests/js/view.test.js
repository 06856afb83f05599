// The current view as a file and the slider's round deadlines (templates/assets/js/
// downloads.js, slider.js).
"use strict";
const test = require("node:test");
const assert = require("node:assert/strict");
const { modules } = require("./modules.js");

let E;
test.before(async () => { E = await modules("downloads.js", "slider.js"); });

test("CSV fields: quoted when needed, formulas defused, missing values empty", () => {
  assert.equal(E.csvField("plain"), "plain");
  assert.equal(E.csvField('a "b", c'), '"a ""b"", c"');
  assert.equal(E.csvField("=HYPERLINK(1)"), "'=HYPERLINK(1)");
  assert.equal(E.csvField("-1+2"), "'-1+2");
  assert.equal(E.csvField(-1.5), "-1.5");  // a number is a number, not a formula
  assert.equal(E.csvField(null), "");
});

test("a ranking CSV holds the view's rows at full precision", () => {
  const data = { table: [{ key: "tokens_per_joule", show: "fixed2" }, { key: "gpu", show: "gpu" },
    { key: "median_itl_ms", by_percentile: { p50: "median_itl_ms", p90: "p90_itl_ms" } }],
  models: { "a/x": { nickname: "X, the model" } } };
  const rows = [{ rank: 1, config: { model_id: "a/x", gpu_model: "H100", num_gpus: 2,
    tokens_per_joule: 22.616138585108775, median_itl_ms: 10, p90_itl_ms: 12.5 } }];
  const header = "rank,model_id,nickname,gpu_model,num_gpus,tokens_per_joule,p90_itl_ms," +
    "rank_best,rank_worst,critical_value,degrees_of_freedom\n";
  // Noise unknown: exact places, no critical value.
  assert.equal(E.rankingCsv(rows, data, "p90"),
    `${header}1,a/x,"X, the model",H100,2,22.616138585108775,12.5,1,1,,\n`);
  // Known: the row's places and the critical value and degrees of freedom Python chose.
  const shared = [{ ...rows[0], rankBest: 1, rankWorst: 2 }];
  const noisy = { ...data, noise: { s: 0.0837, c: 3.1824463052837078, nu: 3 } };
  assert.equal(E.rankingCsv(shared, noisy, "p90"),
    `${header}1,a/x,"X, the model",H100,2,22.616138585108775,12.5,1,2,3.1824463052837078,3\n`);
});

test("slider ticks: 1 and 3 times powers of ten inside the range, decades when crowded", () => {
  assert.deepEqual(E.sliderTicks(3.8, 1000), [10, 30, 100, 300, 1000]);
  assert.deepEqual(E.sliderTicks(0.5, 2000), [1, 10, 100, 1000]);
  assert.deepEqual(E.sliderTicks(120, 250), []);
});
