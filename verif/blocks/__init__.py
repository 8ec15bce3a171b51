"""Block-level cocotb tests: one package per RTL module, each with a pytest runner and a cocotb module."""
