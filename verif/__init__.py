"""Verification: cocotb block tests (verif/blocks) and the shared runner helper (verif/runner.py)."""
