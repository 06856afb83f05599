// jouleboard site script: progressive enhancement only; every table and chart works without it.
(() => {
  "use strict";

  // Sortable tables: each header becomes a button; cells carry their raw value in data-value.
  function sortTable(table, index, th) {
    const ascending = th.getAttribute("aria-sort") !== "ascending";
    for (const cell of table.tHead.rows[0].cells) cell.removeAttribute("aria-sort");
    th.setAttribute("aria-sort", ascending ? "ascending" : "descending");
    const numeric = th.classList.contains("num");
    const body = table.tBodies[0];
    const rows = Array.from(body.rows).filter((row) => row.cells.length > index);
    rows.sort((a, b) => {
      const x = a.cells[index].dataset.value;
      const y = b.cells[index].dataset.value;
      const order = numeric ? Number(x) - Number(y) : x.localeCompare(y);
      return ascending ? order : -order;
    });
    body.append(...rows);
  }

  for (const table of document.querySelectorAll("table.sortable")) {
    if (!table.tHead || table.tBodies[0].rows.length < 2) continue;
    Array.from(table.tHead.rows[0].cells).forEach((th, index) => {
      const button = document.createElement("button");
      button.type = "button";
      button.className = "sort";
      button.append(...th.childNodes);
      th.append(button);
      button.addEventListener("click", () => sortTable(table, index, th));
    });
  }

  // Charts: a static SVG by default; the shared Vega bundle loads only when asked for.
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
    }
    return vega;
  }

  async function makeInteractive(figure) {
    const [embed, spec] = await Promise.all([
      loadVega(),
      fetch(figure.dataset.spec).then((response) => response.json()),
    ]);
    spec.width = "container";
    const holder = document.createElement("div");
    holder.className = "vega";
    figure.querySelector("img").replaceWith(holder);
    // ast: true makes Vega interpret expressions instead of compiling them: no eval, so the
    // page's Content-Security-Policy needs no 'unsafe-eval'.
    await embed(holder, spec, {
      ast: true,
      renderer: "svg",
      actions: { export: true, source: false, compiled: false, editor: false },
    });
  }

  for (const figure of document.querySelectorAll("figure.chart[data-spec]")) {
    const button = figure.querySelector("button.interactive");
    if (!button) continue;
    button.hidden = false;
    button.addEventListener("click", () => {
      button.disabled = true;
      makeInteractive(figure).then(
        () => button.remove(),
        () => { button.disabled = false; },
      );
    });
  }
})();
