// Live charts: a figure shows its static SVG until a reader asks for the interactive chart
// (or the task page redraws it); the shared Vega bundle loads only then.

// Each loaded once; a load that failed is forgotten, so that asking again tries again.
let vega = null;
function loadVega() {
  if (!vega) {
    vega = new Promise((resolve, reject) => {
      const script = document.createElement("script");
      script.src = document.body.dataset.vega;
      script.onload = () => resolve(window.vegaEmbed);
      script.onerror = reject;
      document.head.append(script);
    });
    vega.catch(() => { vega = null; });
  }
  return vega;
}

const specs = new Map();
function fetchSpec(url) {
  if (!specs.has(url)) {
    const loading = fetch(url).then((response) => response.json());
    loading.catch(() => specs.delete(url));
    specs.set(url, loading);
  }
  return specs.get(url).then((spec) => JSON.parse(JSON.stringify(spec)));
}

// charts.wrapped_labels for a chart the page draws: a model name of more than 20
// characters (about 125 px) on two lines, broken at the last space that keeps the first
// line within them, never in a word; centred on its band as charts._wrapped_axis does.
const CUT = "lastindexof(substring(datum.label, 0, 21), ' ')";
const WRAPS = `length(datum.label) > 20 && ${CUT} > 0`;
function wrapNames(axis) {
  axis.labelExpr = `${WRAPS} ? [substring(datum.label, 0, ${CUT}), ` +
    `substring(datum.label, ${CUT} + 1)] : datum.label`;
  axis.labelLineHeight = 12;
  axis.labelOffset = { condition: { test: WRAPS, value: -6 }, value: 0 };
}

// charts.phone: one-column legends, names on two lines, the caption holds the title, and
// a chart's own phone data where it has some (usermeta.phone: line names wrapped narrower).
function phoneLayout(spec, width) {
  let wrapped = false;
  delete spec.title;
  const own = spec.usermeta && spec.usermeta.phone;
  if (own && own.datasets) {
    spec.datasets = { ...spec.datasets, ...own.datasets };
    if (own.height) spec.height = own.height;
  }
  (function visit(node) {
    if (Array.isArray(node)) node.forEach(visit);
    else if (node && typeof node === "object") {
      if (node.axis && typeof node.axis === "object" && node.axis.labelLimit > 125) {
        node.axis.labelLimit = 125;
        wrapNames(node.axis);
        wrapped = true;
      }
      if (node.legend && typeof node.legend === "object") {
        node.legend.columns = 1;
        node.legend.labelLimit = Math.max(width - 40, 120);
      }
      Object.values(node).forEach(visit);
    }
  })(spec);
  // One band per model: room for a name's two lines (24 px a band on a desktop).
  if (wrapped && Number.isInteger(spec.height)) spec.height = Math.round(spec.height * 28 / 24);
}

// The room a live chart has: its holder's width less the px vega-embed keeps right of it for
// the actions button, which a narrow screen's style (style.css) puts above the chart instead.
const ACTIONS = 38;
const ACTIONS_ABOVE = "(max-width: 600px)";

// A chart whose names are placed for set widths (usermeta.live: plan/task_charts.py
// accuracy_spec) is drawn at the widest of them that fits its room, with that width's
// places: names placed for a wider plot could cover its points and steps. A width names
// only the models it has a clear place for.
function placedWidth(spec, room) {
  const live = spec.usermeta && spec.usermeta.live;
  if (!live) return;
  const fit = live.widths.find((w) => w.width <= room) || live.widths[live.widths.length - 1];
  spec.width = fit.width;
  for (const row of spec.datasets[live.dataset]) {
    const place = fit.names[row.model];
    row.named = place !== undefined;
    if (place) [row.name_at, row.below] = place;
  }
}

// A live chart is themed as it is drawn: when the reader's light or dark setting changes
// while the page is open, each one is drawn again, as it was last drawn, in the new scheme
// (the static images follow the setting by their own style rules).
const DARK = "(prefers-color-scheme: dark)";
let live = null;  // the figures drawn live, from the first one on
function followScheme(figure) {
  if (!live) {
    live = new Set();
    window.matchMedia(DARK).addEventListener("change", () => {
      for (const f of live) embedChart(f, f.jbAdjust).catch(() => {});
    });
  }
  live.add(figure);
}

// charts.THEME_STYLE for live charts: the chart grey turns light on a dark page.
function themed(spec) {
  if (!window.matchMedia(DARK).matches) return spec;
  const data = spec.datasets;
  delete spec.datasets;
  const out = JSON.parse(JSON.stringify(spec).replaceAll("#6b6b6b", "#c3c9d2")
    .replaceAll('"#111"', '"#f2f4f7"'));
  if (data) out.datasets = data;
  return out;
}

// The element a live chart draws into: where the static image was.
function holderOf(figure) {
  let holder = figure.querySelector(".vega");
  if (!holder) {
    holder = document.createElement("div");
    holder.className = "vega";
    const image = figure.querySelector("picture") || figure.querySelector("img");
    if (image) image.replaceWith(holder);
    else figure.prepend(holder);
  }
  return holder;
}

// Render a figure's chart with vega-embed; `adjust` may rebind the spec's data first. One
// draw at a time per figure, and the newest request wins: two in flight (two quick changes
// while the spec loads) each added vega-embed's actions menu, so the chart had two. A
// request a newer one replaced settles as that one does, once its chart is drawn (or not).
const REPLACED = Symbol("replaced");
export async function embedChart(figure, adjust) {
  const turn = (figure.jbTurn || 0) + 1;
  figure.jbTurn = turn;
  // The view to draw again in the other colour scheme: the newest asked for, drawn or not.
  figure.jbAdjust = adjust;
  const before = figure.jbQueue || Promise.resolve();
  const mine = before.catch(() => {})
    .then(() => (figure.jbTurn === turn ? drawChart(figure, adjust) : REPLACED));
  figure.jbQueue = mine;
  let result = await mine;
  while (result === REPLACED) result = await figure.jbQueue;
  return result;
}

async function drawChart(figure, adjust) {
  const [embed, spec] = await Promise.all([loadVega(), fetchSpec(figure.dataset.spec)]);
  if (adjust) adjust(spec);
  // The figure's caption (an embed page's h1) says the title: the chart does not repeat it.
  spec.title = "";
  spec.width = "container";
  spec.autosize = { type: "fit-x", contains: "padding" };
  // A narrow screen gets the phone layout (render/charts.py phone): text at its own size.
  if (figure.clientWidth < 480) phoneLayout(spec, figure.clientWidth);
  const holder = holderOf(figure);
  placedWidth(spec, holder.clientWidth - (window.matchMedia(ACTIONS_ABOVE).matches ? 0 : ACTIONS));
  if (figure.jbView) figure.jbView.finalize();
  // ast: true makes Vega interpret expressions instead of compiling them: no eval, so the
  // page's Content-Security-Policy needs no 'unsafe-eval'.
  // vega-embed's actions menu opens from an icon alone: its summary needs a name, from the
  // moment vega-embed adds it (before its promise settles; a check then found it nameless).
  const naming = new MutationObserver(() => nameActions(holder));
  naming.observe(holder, { childList: true, subtree: true });
  let result;
  try {
    result = await embed(holder, themed(spec), {
      ast: true,
      renderer: "svg",
      actions: { export: true, source: false, compiled: false, editor: false },
    });
  } finally {
    naming.disconnect();
  }
  nameActions(holder);
  figure.jbView = result.view;
  followScheme(figure);
  // One name for the drawing, not Vega's "Vega visualization" over a label per mark
  // (about 190 raw floats and field names on a task's bar chart).
  const svg = holder.querySelector("svg.marks");
  if (svg) {
    svg.setAttribute("role", "img");
    svg.setAttribute("aria-label", `Interactive chart: ${chartName(figure)}`);
  }
  const button = figure.querySelector("button.interactive");
  if (button) button.remove();
  return result;
}

function nameActions(holder) {
  const actions = holder.querySelector("details > summary");
  if (actions && !actions.hasAttribute("aria-label")) {
    actions.setAttribute("aria-label", "Chart actions: save as SVG or PNG");
  }
}

// A chart's title and view ("Top 7 by tokens per joule (median ITL ≤ 50 ms)"): its
// caption's, or an embed page's heading.
function chartName(figure) {
  const title = figure.querySelector(".chart-title") || document.querySelector("main > h1");
  const note = figure.querySelector(".chart-note");
  const text = title ? title.textContent.trim() : "chart";
  return note ? `${text} (${note.textContent.trim()})` : text;
}

// Where focus goes once a chart is drawn from its "interactive" button, which is gone:
// the chart's actions, or the chart.
function focusChart(figure) {
  const holder = figure.querySelector(".vega");
  const target = (holder && holder.querySelector("details > summary")) || holder;
  if (!target) return;
  if (target === holder) holder.tabIndex = -1;
  target.focus();
}

// Each figure's "interactive" button (every page has it, embed pages too) loads its chart.
export function wireChartButtons() {
  for (const figure of document.querySelectorAll("figure.chart[data-spec]")) {
    const button = figure.querySelector("button.interactive");
    if (!button) continue;
    button.hidden = false;
    button.addEventListener("click", () => {
      const focused = document.activeElement === button;
      button.disabled = true;
      embedChart(figure).then(() => { if (focused) focusChart(figure); })
        .catch(() => { button.disabled = false; });
    });
  }
}
