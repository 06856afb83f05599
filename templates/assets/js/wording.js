// Sentences the page writes about a view. The words themselves (a kind's latency wording,
// unit and scale) come from the explore JSON (Latency.browser() of jouleboard/kinds/base.py).

// A deadline in the unit a kind shows it in, as Python's {:g} writes it: 300, 1.5.
function inUnit(ms, latency) {
  return +(ms / latency.scale_ms).toPrecision(6);
}

// Latency.text: "median inter-token latency ≤ 300 ms".
export function deadlineText(ms, percentile, latency) {
  return `${latency.words[percentile]} ≤ ${inUnit(ms, latency)} ${latency.unit}`;
}

// Latency.value: "300 ms", "30 s".
export function latencyValue(ms, latency) {
  return `${inUnit(ms, latency)} ${latency.unit}`;
}

// The label of a chart's deadline rule, as plan/views.py writes it: "deadline 300 ms".
export function deadlineLabel(ms, latency) {
  return `deadline ${inUnit(ms, latency)} ${latency.unit}`;
}

export function capital(text) {
  return `${text[0].toUpperCase()}${text.slice(1)}`;
}

// The status line: how many models meet the view and, while the search box holds a query,
// how many of them match it (it follows the search as it changes).
export function statusText(meet, view, empty, query, shown) {
  if (!meet) return empty;
  const line = `${meet} model${meet === 1 ? "" : "s"} meet ${view}.`;
  const q = query.trim();
  return q ? `${line} ${shown} of them match${shown === 1 ? "es" : ""} “${q}”.` : line;
}
