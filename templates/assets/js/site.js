// jouleboard site script, on every page: progressive enhancement only; every table and
// chart works without it.
import { wireChartButtons } from "./live-chart.js";
import { wireEmbedCodes } from "./embed-codes.js";
import { wireSearchBoxes } from "./search.js";
import { makeSortable } from "./sortable.js";

// A visible cue when a table has more columns than its box shows.
function cueScroll(wrap) {
  let cue = wrap.previousElementSibling;
  if (!cue || !cue.classList.contains("scroll-cue")) {
    cue = document.createElement("p");
    cue.className = "scroll-cue";
    cue.textContent = "More columns → scroll the table sideways";
    wrap.before(cue);
  }
  const more = wrap.scrollWidth - wrap.clientWidth > 2;
  const end = wrap.scrollLeft + wrap.clientWidth >= wrap.scrollWidth - 2;
  cue.hidden = !more || end;
}

function wireScrollCues() {
  const sized = new ResizeObserver((entries) => entries.forEach((e) => cueScroll(e.target)));
  for (const wrap of document.querySelectorAll(".table-wrap")) {
    sized.observe(wrap);
    wrap.addEventListener("scroll", () => cueScroll(wrap), { passive: true });
  }
}

// A row of links that scrolls sideways (the tasks under the header on a phone) says so:
// .more while some of it lies past the right edge (style.css fades that edge).
function wireTaskRows() {
  for (const row of document.querySelectorAll(".tasks-nav ul")) {
    const cue = () => row.classList.toggle("more",
      row.scrollLeft + row.clientWidth < row.scrollWidth - 2);
    cue();
    row.addEventListener("scroll", cue, { passive: true });
    window.addEventListener("resize", cue);
  }
}

document.querySelectorAll("table.sortable").forEach(makeSortable);
wireScrollCues();
wireChartButtons();
wireEmbedCodes();
wireTaskRows();
wireSearchBoxes();
// An embed page asked for a view other than its default one (an embed code made on a task
// page at the reader's settings): its own module draws it.
const view = document.querySelector("figure.chart[data-view]");
if (view && location.search) {
  import("./embed-view.js").then((m) => m.drawEmbedView(view)).catch(() => {});
}
