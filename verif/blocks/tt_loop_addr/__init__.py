"""tt_loop_addr block tests."""
