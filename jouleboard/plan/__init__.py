"""The page plan: every page and file of the site as values, before anything is rendered.

views.py  what templates receive, and the per-task view computed once
task.py   task pages and home sections     entities.py  model and GPU pages
indexes.py compare page, model/GPU indexes  downloads.py the full data set per kind
explore.py the browser's data per task      site.py      plan_site: all of it, plus embeds,
                                                         downloads page, 404, sitemap, schema
"""
