"""Selection under a deadline and ranking; the columns and cells of ranked tables."""
