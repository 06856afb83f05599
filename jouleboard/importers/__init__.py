"""Sources of measurements (ML.ENERGY site data, raw benchmark runs), all
through one contract (importers/contract.py)."""
