"""tt_rank block tests."""
