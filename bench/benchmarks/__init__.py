"""asv benchmarks for ppk.  Run from bench/:  asv run --python=same --quick  (or without --quick)."""
