"""scripts/pll.py: the PLL settings come from the vendor calculators and make exactly the requested clock; a clock the
PLL cannot make is refused, naming the nearest ones it can (by hand: ECP5 makes 25 MHz x CLKFB_DIV / CLKI_DIV)."""

import shutil

import pytest

from scripts import pll


@pytest.mark.parametrize("mhz,dividers", [(100.0, (1, 4, 6)), (125.0, (1, 5, 5)), (110.0, (5, 22, 5))])
def test_ecp5_settings_make_the_clock(mhz, dividers):
    got = pll.ecp5_settings(25.0, mhz)
    p = got["params"]
    assert (p["ECP5_CLKI_DIV"], p["ECP5_CLKFB_DIV"], p["ECP5_CLKOP_DIV"]) == dividers
    assert got["achieved_mhz"] == pytest.approx(25.0 * p["ECP5_CLKFB_DIV"] / p["ECP5_CLKI_DIV"]) == pytest.approx(mhz)
    assert 400 <= got["vco_mhz"] <= 800 and got["vco_mhz"] == pytest.approx(mhz * p["ECP5_CLKOP_DIV"], rel=1e-3)


def test_ice40_settings_make_the_clock():
    got = pll.ice40_settings(12.0, 24.0)
    p = got["params"]
    assert 12.0 * (p["ICE40_DIVF"] + 1) / ((p["ICE40_DIVR"] + 1) * 2 ** p["ICE40_DIVQ"]) == pytest.approx(24.0)


def test_nearest_clocks_by_hand():
    # 37 MHz: 25 x 3 / 2 = 37.5 is the nearest above; below it, 25 x 10 / 7 = 35.71 (25 x 13 / 9 = 36.1 would need a
    # phase detector at 25 / 9 = 2.8 MHz, under the ECP5's 3.125)
    lo, hi = pll.nearest("ecp5", 25.0, 37.0)
    assert hi == pytest.approx(37.5) and lo == pytest.approx(250 / 7)
    assert pll.nearest("ecp5", 25.0, 1000.0) == (400.0, None)


@pytest.mark.parametrize("family,fin,fout", [("ecp5", 25.0, 37.0), ("ice40", 12.0, 100.1)])
def test_a_clock_the_pll_cannot_make_is_refused(family, fin, fout):
    lo, hi = pll.nearest(family, fin, fout)
    with pytest.raises(pll.PllError, match=rf"cannot make {fout:g} MHz .*nearest clocks it can make are"):
        pll.settings(family, fin, fout)
    assert lo < fout < hi


def test_every_achievable_clock_is_in_the_limits():
    clocks = pll.achievable("ecp5", 25.0)
    assert clocks == sorted(set(clocks)) and 100.0 in clocks and 125.0 in clocks
    assert min(clocks) >= pll.ECP5["out"][0] and max(clocks) <= pll.ECP5["out"][1]


def test_a_clean_clone_without_build_gets_its_settings(monkeypatch):
    """A fresh clone has no build/: the settings still come, and the scratch space is made for them."""
    fresh = pll.ROOT / "build" / "test-pll-fresh-clone"
    shutil.rmtree(fresh, ignore_errors=True)
    monkeypatch.setattr(pll, "ROOT", fresh)
    try:
        assert pll.ecp5_settings(25.0, 100.0)["params"]["ECP5_CLKFB_DIV"] == 4
        assert (fresh / "build").is_dir()
    finally:
        shutil.rmtree(fresh, ignore_errors=True)
