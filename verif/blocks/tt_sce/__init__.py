"""tt_sce block tests."""
