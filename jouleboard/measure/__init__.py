"""What a measurement means: metrics, the checks and physical bounds, units and
number formats."""
