// URL parameters of the page modules (templates/assets/js/url-state.js, rank.js) select own
// keys only: a name every object inherits ("constructor", "__proto__", "toString") falls
// back to the default.
"use strict";
const test = require("node:test");
const assert = require("node:assert/strict");
const { modules } = require("./modules.js");

let E;
let R;
test.before(async () => {
  E = await modules("url-state.js", "wording.js", "formats.js");
  R = await modules("rank.js");
});

const INHERITED = ["constructor", "__proto__", "toString", "hasOwnProperty", "valueOf"];
const DEFAULTS = { deadline: 300, pct: "p50", gpu: ["B200"], precision: ["bfloat16", "fp8"],
  budget: "", q: "", sort: "" };
// The percentiles, GPUs and precisions the page offers (its controls).
const PERCENTILES = ["p50", "p90", "p95", "p99"];
const CHOICES = { percentiles: PERCENTILES, gpus: ["B200", "H100"], precisions: ["bfloat16", "fp8"],
  calculator: false };
const TASKS = { gpqa: { deadline: 300, pct: "p50", percentiles: PERCENTILES },
  "image-chat": { deadline: 200, pct: "p90", percentiles: PERCENTILES } };

for (const name of INHERITED) {
  test(`task page: ?pct=${name} and ?gpu=${name} fall back to the defaults`, () => {
    const state = E.taskState(`?pct=${name}&gpu=${name}&precision=${name}`, DEFAULTS, CHOICES);
    assert.equal(state.pct, "p50");
    assert.deepEqual(state.gpu, ["B200"]);
    assert.deepEqual(state.precision, ["bfloat16", "fp8"]);
  });

  test(`compare page: ?task=${name}&pct=${name} fall back to the first task`, () => {
    const state = E.compareState(`?task=${name}&pct=${name}`, TASKS, "gpqa", {}, 6);
    assert.equal(state.task, "gpqa");
    assert.equal(state.pct, "p50");
    assert.equal(state.deadline, 300);
  });

  test(`ownKey refuses the inherited name ${name}`, () => {
    assert.equal(E.ownKey({ a: 1 }, name), false);
    assert.equal(E.ownKey(Object.create(null), name), false);
  });

  test(`rank.js: percentile ${name} is an error, not a field lookup`, () => {
    assert.throws(() => R.latency({ median_itl_ms: 1 }, name), RangeError);
  });
}

test("valid parameters are kept", () => {
  const state = E.taskState("?pct=p90&gpu=H100,toString&deadline=150", DEFAULTS, CHOICES);
  assert.equal(state.pct, "p90");
  assert.deepEqual(state.gpu, ["H100"]);
  assert.equal(state.deadline, 150);
  const compare = E.compareState("?task=image-chat&models=a/b", TASKS, "gpqa", {}, 6);
  assert.equal(compare.task, "image-chat");
  assert.equal(compare.pct, "p90");
  assert.deepEqual(compare.models, ["a/b"]);
});

test("an empty GPU list is a choice (nothing ticked), kept as such", () => {
  assert.deepEqual(E.taskState("?gpu=", DEFAULTS, CHOICES).gpu, []);
});

test("the caption text never shows an inherited function", () => {
  const state = E.taskState("?pct=constructor", DEFAULTS, CHOICES);
  // Wording as a token task's explore JSON carries it (TokenKind.latency.browser()).
  const latency = { words: { p50: "median inter-token latency" }, unit: "ms", scale_ms: 1 };
  assert.equal(E.deadlineText(300, state.pct, latency), "median inter-token latency ≤ 300 ms");
});

test("show prints numbers by the display rules of measure/formats.py", () => {
  // Hand-worked: grouped thousands, fixed decimals, 3 significant digits (carry 9.996 -> 10.0).
  assert.equal(E.show("fixed2", 35.1549), "35.15");
  assert.equal(E.show("fixed4", 0.028449), "0.0284");
  assert.equal(E.show("sig3", 9.996), "10.0");
  assert.equal(E.show("sig3", 1234567.8), "1,234,568");
  assert.equal(E.show("int", 4096), "4,096");
  assert.equal(E.show("precision", "mxfp4", { mxfp4: "MXFP4" }), "MXFP4");
  assert.equal(E.show("sig3", null), "–");
});

// ?deadline= speaks the deadline box's unit (issue 29 item 9): seconds on diffusion pages.
test("deadline URL values: unit suffix, bare ms for old links, junk refused", () => {
  assert.equal(E.deadlineParam("60s"), 60000);
  assert.equal(E.deadlineParam("1.5s"), 1500);
  assert.equal(E.deadlineParam("300ms"), 300);
  assert.equal(E.deadlineParam("300"), 300); // every link written before: ms
  assert.equal(E.deadlineParam("30000"), 30000);
  for (const bad of ["", "s", "-5s", "0", "0s", "abc", "60 min", "1e999", null]) {
    assert.equal(E.deadlineParam(bad), null, String(bad));
  }
  const seconds = { scale: 1000, unit: "s" };
  assert.equal(E.deadlineValue(60000, seconds), "60s");
  assert.equal(E.deadlineValue(1500, seconds), "1.5s");
  assert.equal(E.deadlineValue(300, { scale: 1, unit: "ms" }), "300");
  assert.equal(E.deadlineValue(300), "300");
  assert.equal(E.taskState("?deadline=60s", DEFAULTS, CHOICES).deadline, 60000);
  assert.equal(E.taskState("?deadline=-1", DEFAULTS, CHOICES).deadline, 300);
  assert.equal(E.compareState("?task=gpqa&deadline=2s", TASKS, "gpqa", {}, 6).deadline, 2000);
});
