"""tt_contract block tests."""
