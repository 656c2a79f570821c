"""Benchmarks: each scenario measures its comparison side by side in one run and prints ratios (`make bench`)."""
