"""The page plan: which pages exist, each with a typed context (no I/O, no HTML)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from jouleboard import rank as ranking
from jouleboard.contexts import (
    GROUPS,
    Calculator,
    ChartRef,
    CompareBody,
    CompareTask,
    Download,
    Explorer,
    HomeBody,
    IndexBody,
    Link,
    Page,
    Plan,
    PresetRanking,
    QualitySection,
    QualitySource,
    TaskBody,
    TaskSection,
)
from jouleboard.dataset import Dataset
from jouleboard.present import charts
from jouleboard.present.footprint import FootprintInputs, footprint_table
from jouleboard.present.formats import PRECISION_LABELS, significant
from jouleboard.present.markdown import render_markdown
from jouleboard.present.tables import (
    Cell,
    Column,
    Table,
    model_cell,
    num_cell,
    ranking_table,
)
from jouleboard.records import (
    PERCENTILES,
    Configuration,
    DiffusionConfiguration,
    Percentile,
    Record,
    TaskInfo,
)
from jouleboard.urls import Urls, deadline_slug

PERCENTILE_WORDS = {"p50": "median", "p90": "p90", "p95": "p95", "p99": "p99"}


def deadline_text(ms: float, percentile: Percentile) -> str:
    return f"{PERCENTILE_WORDS[percentile]} inter-token latency ≤ {ms:g} ms"


def latency_title(percentile: Percentile) -> str:
    return f"{PERCENTILE_WORDS[percentile].capitalize()} inter-token latency (ms, log)"


def config_label(c: Configuration) -> str:
    precision = PRECISION_LABELS.get(c.weight_precision, c.weight_precision)
    return f"{c.num_gpus}× {c.gpu_model}, {precision}, batch cap {c.max_num_seqs}"


class Planner:
    """Computes every ranking once and turns them into pages, charts and downloads."""

    def __init__(self, data: Dataset, urls: Urls) -> None:
        self.data, self.reg, self.urls = data, data.registry, urls
        self.plan = Plan()
        diffusion = {t for t, info in self.reg.tasks.items() if info.kind == "diffusion"}
        # LLM/MLLM tasks; text-to-image and text-to-video live in diffusion_by_task.
        self.by_task: dict[str, list[Configuration]] = {
            t: [] for t in self.reg.tasks if t not in diffusion}
        self.diffusion_by_task: dict[str, list[DiffusionConfiguration]] = {
            t: [] for t in diffusion}
        self.by_model: dict[str, dict[str, list[Record]]] = {}  # model -> task -> configs
        for c in data.configurations:
            if isinstance(c, Configuration):
                self.by_task[c.task].append(c)
            else:
                self.diffusion_by_task[c.task].append(c)
            self.by_model.setdefault(c.model_id, {}).setdefault(c.task, []).append(c)
        self.gpu_counts = Counter(c.gpu_model for c in data.configurations)
        self.best_by_gpu: dict[str, dict[tuple[str, str], Any]] = {
            **{t: ranking.best_per_model_and_gpu(cs, self._deadline(t))
               for t, cs in self.by_task.items()},
            **{t: ranking.best_per_model_and_gpu(ds, self._deadline(t))
               for t, ds in self.diffusion_by_task.items()}}
        self.default_gpus = set(self.reg.site.default_gpus)
        self.rankings = {t: ranking.rank(cs, self._deadline(t), gpus=self.default_gpus)
                         for t, cs in self.by_task.items()}
        self.diffusion_rankings = {
            t: ranking.rank(cs, self._deadline(t), gpus=self.default_gpus)
            for t, cs in self.diffusion_by_task.items()}

    def _deadline(self, task: str) -> ranking.Deadline:
        d = self.reg.tasks[task].default_deadline
        return ranking.Deadline(d.ms, d.percentile)

    def _deadline_text(self, task: str) -> str:
        d = self._deadline(task)
        if self.reg.tasks[task].kind == "diffusion":
            return f"batch latency ≤ {d.ms / 1000:g} s"
        return deadline_text(d.ms, d.percentile)

    # --- charts -------------------------------------------------------------------------

    def bar_chart(self, task: str) -> ChartRef | None:
        top = self.rankings[task][: self.reg.site.top_n]
        if not top:
            return None
        rows = [{"model": self.reg.models[r.config.model_id].nickname, "rank": r.rank,
                 "value": r.config.tokens_per_joule, "gpu": r.config.gpu_model} for r in top]
        name = self.reg.tasks[task].name
        spec = charts.bind(charts.ranking_bar("Tokens per joule (higher is better)"),
                           {"table": rows}, f"{name}: top {len(top)} by tokens per joule")
        return self.plan.chart(
            self.urls, "top", [task], spec["title"],
            f"Bar chart of tokens per joule for the {len(top)} most efficient models at "
            f"{self._deadline_text(task)}; the table shows the same figures.", spec,
            self.urls.task(task), f"at {self._deadline_text(task)}",
            table_id=f"ranking-{task}")

    def scatter_chart(self, task: str) -> ChartRef:
        d = self._deadline(task)
        chosen = {r.config.identity for r in self.rankings[task]}
        rows = [{"model": self.reg.models[c.model_id].nickname, "gpu": c.gpu_model,
                 "latency": c.itl_ms(d.percentile), "energy": c.energy_per_token_joules,
                 "chosen": c.identity in chosen, "config": config_label(c)}
                for c in self.by_task[task]]
        spec = charts.bind(charts.task_scatter(latency_title(d.percentile)),
                           {"table": rows, "deadline": [{"ms": d.ms,
                                                         "label": f"deadline {d.ms:g} ms"}]},
                           f"{self.reg.tasks[task].name}: every configuration")
        return self.plan.chart(
            self.urls, "configurations", [task], spec["title"],
            f"Scatter plot of energy per token against {PERCENTILE_WORDS[d.percentile]} "
            f"inter-token latency for all {len(rows)} configurations, with the {d.ms:g} ms "
            "deadline drawn and each model's chosen configuration enlarged; the ranking table "
            "lists the chosen ones.", spec, self.urls.task(task),
            f"deadline: {self._deadline_text(task)}", table_id=f"ranking-{task}")

    # --- pages --------------------------------------------------------------------------

    def build(self) -> Plan:
        self.plan.pages.append(self.home_page())
        for task in self.reg.tasks:
            self.plan.pages.append(self.task_page(task))
        model_ids = sorted(self.by_model)
        for model_id in model_ids:
            self.plan.pages.append(self.model_page(model_id))
        for gpu in sorted(self.reg.gpus):
            self.plan.pages.append(self.gpu_page(gpu))
        self.plan.pages.append(self.compare_page())
        self.plan.pages.append(self.models_index(model_ids))
        self.plan.pages.append(self.gpus_index())
        self.plan.downloads.extend(self.configuration_downloads())
        return self.plan

    def home_page(self) -> Page:
        from jouleboard.pages_diffusion import diffusion_bar_chart, diffusion_top_table

        sections = []
        kinds = {"llm": 0, "mllm": 1, "diffusion": 2}
        for task, info in sorted(self.reg.tasks.items(), key=lambda t: kinds[t[1].kind]):
            caption = f"{info.name}: top {{}} at {self._deadline_text(task)}"
            if info.kind == "diffusion":
                table, chart = diffusion_top_table(self, task, caption), \
                    diffusion_bar_chart(self, task)
            else:
                rows = self.rankings[task][: self.reg.site.top_n]
                table = ranking_table(f"ranking-{task}", caption.format(len(rows)), rows,
                                      self.reg, self.urls, task)
                chart = self.bar_chart(task)
            sections.append(TaskSection(info.name, self.urls.url(self.urls.task(task)),
                                        render_markdown(info.description_md),
                                        self._deadline_text(task), table, chart,
                                        GROUPS[info.kind]))
        site = self.reg.site
        intro = (
            "Each row is a model's most energy-efficient serving configuration that still "
            "meets the latency deadline: the one that produces the most output tokens per "
            "joule of GPU energy. Energy is measured on the GPUs only, in the steady state "
            f"of a serving benchmark on {', '.join(site.default_gpus)} GPUs.")
        return Page(self.urls.home, "home.html", site.title,
                    site.tagline or "GPU energy-efficiency leaderboard",
                    HomeBody(intro, tuple(sections)))

    def task_page(self, task: str) -> Page:
        info: TaskInfo = self.reg.tasks[task]
        if info.kind == "diffusion":
            from jouleboard.pages_diffusion import diffusion_task_page

            return diffusion_task_page(self, task)
        d = self._deadline(task)
        rows = self.rankings[task]
        table = ranking_table(f"ranking-{task}",
                              f"{info.name}: every model at {self._deadline_text(task)}",
                              rows, self.reg, self.urls, task)
        downloads = self.ranking_downloads(task, rows, table.caption, d.ms, d.percentile)
        presets = []
        for ms in info.preset_deadlines_ms:
            if ms == d.ms:
                continue
            preset_rows = ranking.rank(self.by_task[task], ranking.Deadline(ms, d.percentile),
                                       gpus=self.default_gpus)
            text = deadline_text(ms, d.percentile)
            preset = ranking_table(f"ranking-{task}-{ms:g}ms", f"{info.name}: at {text}",
                                   preset_rows, self.reg, self.urls, task)
            presets.append(PresetRanking(text, preset, self.ranking_downloads(
                task, preset_rows, preset.caption, ms, d.percentile)))
        gpus_text = " and ".join(self.reg.site.default_gpus)
        inputs = FootprintInputs()
        calculator = Calculator(inputs, footprint_table(
            f"footprint-{task}", f"Electricity, cost and emissions of the top "
            f"{min(len(rows), self.reg.site.top_n)} at {self._deadline_text(task)}",
            rows[: self.reg.site.top_n], self.reg, self.urls, inputs))
        body = TaskBody(info.name, info.benchmark, render_markdown(info.description_md),
                        self._deadline_text(task), gpus_text, table, tuple(presets),
                        self.scatter_chart(task), self.bar_chart(task), downloads,
                        self.explorer(task), calculator, self.quality_section(task))
        return Page(self.urls.task(task), "task.html", f"{info.name} energy leaderboard",
                    f"Models ranked by tokens per joule on {info.name} ({info.benchmark}) at "
                    f"{self._deadline_text(task)}.", body)

    def accuracy(self, task: str, model_id: str) -> float | None:
        score = self.reg.accuracy(task, model_id)
        return score.accuracy_percent if score else None

    def quality_section(self, task: str) -> QualitySection | None:
        quality = self.reg.quality.get(task)
        if quality is None:
            return None
        d = self._deadline(task)
        objective = ranking.objective_for("energy_per_correct_answer",
                                          lambda m: self.accuracy(task, m))
        rows = ranking.rank(self.by_task[task], d, gpus=self.default_gpus, objective=objective)
        table = ranking_table(f"correct-{task}", f"{self.reg.tasks[task].name}: ranked by "
                              f"energy per correct answer at {self._deadline_text(task)}",
                              rows, self.reg, self.urls, task)
        self.ranking_downloads(task, rows, table.caption, d.ms, d.percentile,
                               by="energy_per_correct_answer")
        ranked = {r.config.model_id for r in self.rankings[task]}
        unscored = tuple(Link(self.reg.models[m].nickname, self.urls.url(self.urls.model(m)))
                         for m in sorted(ranked) if self.accuracy(task, m) is None)
        chart = None
        if rows:
            points = []
            front_best = -1.0
            for r in sorted(rows, key=lambda r: r.config.energy_per_response_joules):
                acc = self.accuracy(task, r.config.model_id) or 0.0
                on_front = acc > front_best
                front_best = max(front_best, acc)
                info = self.reg.models[r.config.model_id]
                points.append({"model": info.nickname, "builder": info.builder,
                               "accuracy": acc, "energy": r.config.energy_per_response_joules,
                               "per_correct": objective(r.config), "frontier": on_front})
            spec = charts.bind(charts.accuracy_energy(), {"table": points},
                               f"{self.reg.tasks[task].name}: accuracy vs energy per response")
            chart = self.plan.chart(
                self.urls, "accuracy", [task], spec["title"],
                f"Scatter plot of {quality.benchmark} accuracy against energy per response for "
                f"{len(points)} models at {self._deadline_text(task)}; the dashed line joins the "
                "models no other beats on both. The table ranked by energy per correct answer "
                "lists the same figures.", spec, self.urls.task(task),
                f"at {self._deadline_text(task)}", table_id=f"correct-{task}")
        sources = tuple(QualitySource(
            self.reg.models[q.model_id].nickname, self.urls.url(self.urls.model(q.model_id)),
            f"{q.accuracy_percent:.1f}", q.setting, q.source_url, q.source_detail,
            q.confidence, q.matches_energy_run) for q in quality.scores)
        return QualitySection(quality.benchmark, render_markdown(quality.note_md), table, chart,
                              sources, unscored)

    def explorer(self, task: str) -> Explorer:
        d = self._deadline(task)
        configs = self.by_task[task]
        latencies = [c.itl_ms(p) for c in configs for p in PERCENTILES] or [d.ms]
        gpus = sorted({c.gpu_model for c in configs})
        precisions = sorted({c.weight_precision for c in configs})
        path = self.urls.explore_data(task)
        self.plan.explore_data[path] = task
        return Explorer(task, self.urls.url(path), d.ms, d.percentile,
                        min_ms=float(min(latencies)), max_ms=float(max(latencies)),
                        gpus=tuple((g, g in self.default_gpus) for g in gpus),
                        precisions=tuple((p, PRECISION_LABELS.get(p, p)) for p in precisions),
                        top_n=self.reg.site.top_n,
                        compare_url=self.urls.url(self.urls.compare) + f"?task={task}")

    def ranking_downloads(self, task: str, rows: Sequence[ranking.RankedRow[Configuration]],
                          caption: str,
                          ms: float, percentile: Percentile, gpu: str | None = None,
                          by: str = "energy_per_token") -> tuple[Link, ...]:
        from jouleboard.present.downloads import RANK_COLUMNS, rank_record

        records = [rank_record(r.rank, r.config, self.reg.models[r.config.model_id].nickname,
                               self.accuracy(task, r.config.model_id)) for r in rows]
        slug = deadline_slug(ms, percentile) + ("" if by == "energy_per_token" else f"-by-{by}")
        links = []
        for ext in ("csv", "json"):
            path = self.urls.ranking_download(task, slug, ext, gpu)
            self.plan.downloads.append(Download(path, RANK_COLUMNS, records))
            links.append(Link(ext.upper(), self.urls.url(path), caption))
        return tuple(links)

    def model_page(self, model_id: str) -> Page:
        from jouleboard.pages_detail import model_page

        return model_page(self, model_id)

    def gpu_page(self, gpu: str) -> Page:
        from jouleboard.pages_detail import gpu_page

        return gpu_page(self, gpu)

    def compare_page(self) -> Page:
        tasks = []
        for task, info in self.reg.tasks.items():
            if info.kind == "diffusion":
                continue  # the comparison tool re-ranks token tasks
            d = self._deadline(task)
            path = self.urls.explore_data(task)
            self.plan.explore_data[path] = task
            tasks.append(CompareTask(task, info.name, self.urls.url(path), d.ms, d.percentile))
        table = ranking_table("compare-table", "Each model's most energy-efficient "
                              "configuration that meets the deadline", [], self.reg, self.urls)
        inputs = FootprintInputs()
        calculator = Calculator(inputs, footprint_table(
            "compare-footprint", "Electricity, cost and emissions at each model's best "
            "configuration", [], self.reg, self.urls, inputs))
        template = self.urls.chart_template("compare-pareto")
        self.plan.chart_templates[template] = charts.compare_pareto(latency_title("p50"))
        return Page(self.urls.compare, "compare.html", "Compare models",
                    "Compare the energy and latency trade-offs of up to six models.",
                    CompareBody(tuple(tasks), self.urls.url(template), table, calculator))

    def models_index(self, model_ids: list[str]) -> Page:
        columns = (Column("model", "Model"), Column("builder", "Builder"),
                   Column("total_params_billions", "Total params", "B", numeric=True),
                   Column("active_params_billions", "Active params", "B", numeric=True),
                   Column("architecture", "Architecture"),
                   Column("weight_precision", "Precision"), Column("tasks", "Tasks"))
        rows = []
        for model_id in model_ids:
            info = self.reg.models[model_id]
            tasks = sorted(self.reg.tasks[t].name for t in self.by_model[model_id])
            precision = PRECISION_LABELS.get(info.weight_precision, info.weight_precision)
            rows.append((model_cell(model_id, self.reg, self.urls),
                         Cell(info.builder, info.builder),
                         Cell(info.total_params_billions,
                              significant(info.total_params_billions, 3)),
                         Cell(info.active_params_billions,
                              significant(info.active_params_billions, 3)),
                         Cell(info.architecture, info.architecture or "–"),
                         Cell(info.weight_precision, precision),
                         Cell(", ".join(tasks), ", ".join(tasks))))
        table = Table("models", f"All {len(rows)} models with measurements", columns,
                      tuple(rows))
        return Page(self.urls.models_index, "index.html", "Models",
                    "Every model on the leaderboard.", IndexBody(
                        "Every model with at least one valid measurement. Open a model for "
                        "its configurations, Pareto frontiers and GPU comparison.", table))

    def gpus_index(self) -> Page:
        columns = (Column("gpu", "GPU"), Column("vendor", "Vendor"),
                   Column("generation", "Generation"),
                   Column("memory_gb", "Memory", "GB", numeric=True),
                   Column("board_power_watts", "Board power limit", "W", numeric=True),
                   Column("configurations", "Configurations", numeric=True))
        rows = []
        for gpu, info in sorted(self.reg.gpus.items()):
            n = self.gpu_counts.get(gpu, 0)
            rows.append((Cell(gpu, info.name, href=self.urls.url(self.urls.gpu(gpu))),
                         Cell(info.vendor, info.vendor), Cell(info.generation, info.generation),
                         Cell(info.memory_gb, f"{info.memory_gb:g}"),
                         Cell(info.board_power_watts, f"{info.board_power_watts:g}"),
                         num_cell(Column("configurations", ""), n)))
        table = Table("gpus", "Accelerators", columns, tuple(rows))
        return Page(self.urls.gpus_index, "index.html", "GPUs",
                    "The accelerators measured.", IndexBody(
                        "The accelerators in the data. A GPU page ranks models on that GPU "
                        "alone and compares each model across GPUs.", table))

    def configuration_downloads(self) -> list[Download]:
        from jouleboard.pages_diffusion import configuration_downloads
        from jouleboard.present.downloads import CONFIGURATION_COLUMNS, configuration_record

        records = [configuration_record(c, self.reg) for c in self.data.token_configurations]
        return [Download(self.urls.configurations_download(ext), CONFIGURATION_COLUMNS, records)
                for ext in ("csv", "json")] + configuration_downloads(self)


def plan_site(data: Dataset, urls: Urls) -> Plan:
    return Planner(data, urls).build()
