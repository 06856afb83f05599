// The embed box under a chart: its code selects itself, copies with one button, and holds
// full addresses where the site was built without site_url.

// Select all on focus, so a click and a copy take the whole snippet.
function selectOnFocus() {
  for (const code of document.querySelectorAll(".embed-code")) {
    code.addEventListener("focus", () => code.select());
  }
}

// A site built without site_url: its embed codes and citations hold root-relative paths,
// which would point at the article's own site once pasted. Here they become this page's
// origin + path (only the exact places a path stands in: src="...", ", path." and \url{}):
// a chart's embed box, and an energy label's code (model pages).
function absoluteAddresses() {
  const origin = location.origin;
  if (!/^https?:/.test(origin)) return;  // opened from a file: no address to give
  for (const box of document.querySelectorAll(".embed-box[data-relative]")) {
    const embed = box.dataset.embedPath;
    const page = box.dataset.pagePath;
    const absolute = (text) => text
      .replaceAll(`src="${embed}"`, `src="${origin}${embed}"`)
      .replaceAll(`, ${page}.`, `, ${origin}${page}.`)
      .replaceAll(`\\url{${page}}`, `\\url{${origin}${page}}`);
    const code = box.querySelector(".embed-code");
    if (code) code.value = absolute(code.value);
    for (const node of box.querySelectorAll(".cite, .bibtex")) {
      node.textContent = absolute(node.textContent);
    }
  }
  for (const figure of document.querySelectorAll(".energy-label[data-relative]")) {
    const code = figure.querySelector(".embed-code");
    const path = figure.dataset.embedPath;
    if (code) code.value = code.value.replaceAll(`src="${path}"`, `src="${origin}${path}"`);
  }
}

// The embed codes of the figures that follow the task page's controls (`ids`): each one's
// iframe, and its embed page link, carry the view's settings (`query`, "?deadline=50&gpu=H100";
// "" for the default view), so what a reader pastes shows what they set; the embed page
// ranks it again (embed-view.js). Its note says the files below still show the default.
export function followEmbedCodes(ids, query) {
  for (const id of ids) {
    const box = document.getElementById(id)?.querySelector(".embed-box");
    const code = box?.querySelector(".embed-code");
    if (!code) continue;
    code.dataset.default ??= code.value;
    const attribute = query.replaceAll("&", "&amp;");
    code.value = code.dataset.default.replace(/src="([^"?]*)"/, (_, url) => `src="${url}${attribute}"`);
    const link = box.querySelector("a.embed-page");
    if (link) {
      link.dataset.default ??= link.getAttribute("href");
      link.setAttribute("href", `${link.dataset.default}${query}`);
    }
    const note = box.querySelector(".default-view");
    if (note) {
      note.dataset.default ??= note.textContent;
      note.textContent = query
        ? "This embed code shows the settings chosen above; the image and data files below " +
          "show the page's default view."
        : note.dataset.default;
    }
  }
}

// Copy buttons: the embed code to the clipboard, said aloud and on screen.
function copyButtons() {
  for (const button of document.querySelectorAll("button.copy[data-copy]")) {
    const source = document.getElementById(button.dataset.copy);
    const status = button.nextElementSibling;
    if (!source) continue;
    button.hidden = false;
    button.addEventListener("click", async () => {
      let done = false;
      try {
        await navigator.clipboard.writeText(source.value);
        done = true;
      } catch {
        source.select();  // no clipboard permission: a selected code and the browser's copy
        done = document.execCommand && document.execCommand("copy");
      }
      if (status) status.textContent = done ? "Copied" : "Selected: press Ctrl+C (⌘C) to copy";
    });
  }
}

export function wireEmbedCodes() {
  selectOnFocus();
  absoluteAddresses();
  copyButtons();
}
