"""scripts/rtl_coverage.py's source-level view of Verilator's per-instance coverage points."""

from scripts import rtl_coverage


def _key(page: str, hier: str, line: int, kind: str = "line", comment: str = "elsif") -> str:
    """A point key as Verilator writes it (the field order of a real coverage.dat)."""
    parts = [
        ("f", "/work/rtl/tt_seq.v"),
        ("l", str(line)),
        ("n", "11"),
        ("t", kind),
        ("page", f"v_{kind}/{page}"),
        ("o", comment),
        ("h", hier),
    ]
    return "\x01".join(f"{k}\x02{v}" for k, v in parts)


def test_a_source_point_is_hit_when_any_parameter_set_or_instance_hits_it():
    points = {
        _key("tt_seq", "tt_accel.u_seq", 264): 0,  # the training tests' parameter set: the error branch is not reached
        _key("tt_seq__Pa_PB3e8", "tt_accel.u_seq", 264): 3,  # the error tests' parameter set reaches it
        _key("tt_seq", "tt_accel.u_seq", 266): 0,  # reached by no run
        _key("tt_seq", "a.u_seq", 266): 0,  # nor by another instance
        _key("tt_seq", "tt_accel.u_seq", 266, "toggle", "state_q[0]:0->1"): 5,
    }
    source = rtl_coverage.by_source(points)
    assert len(source) == 3
    summary = rtl_coverage.summarise(source)["_total"]
    assert summary["lines"] == {"hit": 1, "total": 2, "percent": 50.0}
    assert summary["toggles"] == {"hit": 1, "total": 1, "percent": 100.0}
    assert rtl_coverage.holes(source)["lines"] == ["/work/rtl/tt_seq.v:266 line elsif"]
    instances = rtl_coverage.summarise(points)["_total"]["lines"]
    assert (instances["hit"], instances["total"]) == (1, 4)
