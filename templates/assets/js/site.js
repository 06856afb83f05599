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

// Keyboard focus on a link or button of a table that scrolls sideways lands clear of the
// sticky leading columns (style.css): the browser scrolls a focused element into the box
// when it lies outside it, but leaves it where it is when it lies under them.
const RING = 6; // px: the focus outline and its offset (style.css), kept in view too

function keepFocusClear(wrap, target) {
  const cell = target.closest("td, th");
  if (!cell || !target.matches(":focus-visible")) return;
  const sticky = (c) => getComputedStyle(c).position === "sticky";
  if (sticky(cell)) return;
  const box = wrap.getBoundingClientRect();
  const left = Math.max(box.left + wrap.clientLeft,
    ...Array.from(cell.parentElement.cells).filter(sticky).map((c) => c.getBoundingClientRect().right));
  const right = box.left + wrap.clientLeft + wrap.clientWidth;
  const shown = target.getBoundingClientRect();
  if (shown.left - RING < left) wrap.scrollLeft -= left - (shown.left - RING);
  else if (shown.right + RING > right) {
    wrap.scrollLeft += Math.min(shown.right + RING - right, shown.left - RING - left);
  }
}

function wireScrollCues() {
  const sized = new ResizeObserver((entries) => entries.forEach((e) => cueScroll(e.target)));
  for (const wrap of document.querySelectorAll(".table-wrap")) {
    sized.observe(wrap);
    wrap.addEventListener("scroll", () => cueScroll(wrap), { passive: true });
    wrap.addEventListener("focusin", (event) => keepFocusClear(wrap, event.target));
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
    // A link focused from the keyboard comes whole into view: the browser scrolls a link
    // partly in view no further, and left it cut at the row's edge.
    row.addEventListener("focusin", (event) => {
      event.target.scrollIntoView({ block: "nearest", inline: "nearest" });
    });
  }
}

// A printed page names its address as the reader sees it, the view's query included
// (base.html's print-source line; the task page rewrites its URL as the controls move).
function wirePrintSource() {
  const url = document.querySelector(".print-source .print-url");
  if (!url) return;
  const fill = () => { url.textContent = location.href; };
  fill();
  window.addEventListener("beforeprint", fill);
}

document.querySelectorAll("table.sortable").forEach(makeSortable);
wireScrollCues();
wireChartButtons();
wireEmbedCodes();
wireTaskRows();
wireSearchBoxes();
wirePrintSource();
// An embed page asked for a view other than its default one (an embed code made on a task
// page at the reader's settings): its own module draws it.
const view = document.querySelector("figure.chart[data-view]");
if (view && location.search) {
  import("./embed-view.js").then((m) => m.drawEmbedView(view)).catch(() => {});
}
