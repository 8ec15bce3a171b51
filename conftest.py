"""The order tests run in: those given a longer time limit than the regression's (pytest.mark.timeout) go first, so
that under pytest-xdist (make regress) they run beside the many short tests instead of finishing alone at the end."""


def _time_limit(item) -> float:
    mark = item.get_closest_marker("timeout")
    return float(mark.args[0]) if mark and mark.args else 0.0


def pytest_collection_modifyitems(items):
    items.sort(key=lambda item: -_time_limit(item))  # a stable sort: the others keep their order
