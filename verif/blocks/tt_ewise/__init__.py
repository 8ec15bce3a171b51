"""tt_ewise block tests."""
