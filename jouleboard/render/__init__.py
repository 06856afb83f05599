"""Pages (Jinja2), charts (Altair -> Vega-Lite -> SVG/PNG), markdown, labels,
embeds, downloads."""
