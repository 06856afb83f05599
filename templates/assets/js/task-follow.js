// What follows the task page's controls besides its main table: the finding and its strip,
// the energy-per-correct-answer table, the captions, the compare link, the figures' notes
// and the ranking downloads. Each shows its server-rendered text on the default view.
import { offerDownloads } from "./downloads.js";
import { viewFinding } from "./finding.js";
import { rank } from "./rank.js";
import { fillBody, rankedFirst, rankingRow } from "./table.js";
import { deadlineValue } from "./url-state.js";
import { emptyText, viewText } from "./view-text.js";

// The finding and its "what changes it" strip, and the page's GPUs line: the server wrote
// them for the default view; any other view gets its own (finding.js, the same rules).
function findingFollower(allPrecisions) {
  const sentence = document.querySelector("main .finding .finding-text");
  const list = document.querySelector("main .finding .changes ul");
  const gpus = document.querySelector("main .meta .meta-gpus");
  if (!sentence || !list) return null;
  const served = { sentence: sentence.textContent,
    changes: Array.from(list.children, (li) => li.textContent),
    gpus: gpus ? gpus.textContent : "" };

  function show(f, gpuText) {
    sentence.textContent = f.sentence;
    list.replaceChildren(...f.changes.map((text) => {
      const li = document.createElement("li");
      li.textContent = text;
      return li;
    }));
    if (gpus) gpus.textContent = gpuText;
  }

  return (state, data, plain) => {
    if (plain || !data.finding) {
      show(served, served.gpus);
      return;
    }
    const view = { ms: state.deadline, percentile: state.pct, gpus: state.gpu,
      precisions: state.precision.length === allPrecisions.length ? null : state.precision,
      budget: state.budget === "" ? null : Number(state.budget) };
    show(viewFinding(data, view), state.gpu.join(" and ") || "none");
  };
}

// The models' accuracy, by model id, as the explore rows carry it.
function accuracies(data) {
  const accuracy = {};
  for (const c of data.configs) {
    if (c.accuracy_percent !== null && c.accuracy_percent !== undefined) {
      accuracy[c.model_id] = c.accuracy_percent;
    }
  }
  return accuracy;
}

// The followers of a task page: `captions` holds each table's default caption (by table).
export function viewFollowers(form, controls, table) {
  const d = controls.d;
  const correct = document.getElementById(`correct-${d.task}`);
  const costTable = controls.calc ? document.getElementById(controls.calc.dataset.table) : null;
  const downloads = document.getElementById("ranking-downloads");
  const figures = Array.from(document.querySelectorAll("main figure.chart"));
  const captions = new Map([table, correct, costTable].filter(Boolean)
    .map((t) => [t, t.caption.textContent]));
  for (const f of figures) {
    const note = f.querySelector(".chart-note");
    if (note) note.dataset.default = note.textContent;
  }
  const finding = findingFollower(controls.choices.precisions);
  // The compare link carries the page's deadline, percentile and GPUs (compare ranked on
  // every GPU: an H100-only reader got B200 figures there).
  const compareLink = form.querySelector("a.compare-link");
  const compareBase = compareLink ? compareLink.getAttribute("href") : "";

  function followCompareLink(state) {
    const { defaults } = controls;
    const moved = state.deadline !== defaults.deadline || state.pct !== defaults.pct;
    const gpus = state.gpu.join(",");
    compareLink.href = compareBase +
      (moved ? `&deadline=${deadlineValue(state.deadline, controls.unit)}` +
        `&pct=${encodeURIComponent(state.pct)}` : "") +
      (gpus !== defaults.gpu.join(",") ? `&gpu=${encodeURIComponent(gpus)}` : "");
  }

  function rankByCorrectAnswer(page, options, view, plain) {
    const { state, data } = page;
    const best = rank(data.configs,
      { ...options, objective: "energy_per_correct_answer", accuracy: accuracies(data) });
    const key = "energy_per_correct_answer_joules";
    fillBody(correct, best.map((r) => rankingRow(r, data, state.pct,
      rankedFirst(data.table, key), key)), emptyText(state, data, controls.scale));
    correct.caption.textContent = plain ? captions.get(correct) :
      `${d.taskName}: ranked by energy per correct answer at ${view}`;
  }

  function followFigures(view, plain) {
    for (const f of figures) {
      const note = f.querySelector(".chart-note");
      const follows = f.id === d.scatter || f.id === d.bar;
      if (note) {
        note.textContent = plain ? note.dataset.default : follows ? view :
          `default view, ${note.dataset.default}; the controls above do not change it`;
      }
      const embedNote = f.querySelector(".default-view");
      if (embedNote) embedNote.hidden = plain;
    }
  }

  // `page`: {state, data, rows} of the view drawn; `plain`: it is the default view.
  function follow(page, options, text, plain) {
    const { state, data, rows } = page;
    const view = viewText(state, data, text, controls.choices.precisions);
    if (finding) finding(state, data, plain);
    if (compareLink) followCompareLink(state);
    if (correct) rankByCorrectAnswer(page, options, view, plain);
    if (costTable) {
      costTable.caption.textContent = plain ? captions.get(costTable) :
        `Electricity, cost and emissions of ${rows.length ? `the top ` +
          `${Math.min(rows.length, Number(d.top))} ` : "the models "}at ${view}`;
    }
    followFigures(view, plain);
    if (downloads) {
      offerDownloads(downloads, view, plain,
        { ...page, task: d.task, allPrecisions: controls.choices.precisions });
    }
  }

  return { captions, follow };
}
