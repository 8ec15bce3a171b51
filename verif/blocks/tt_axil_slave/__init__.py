"""tt_axil_slave block tests."""
