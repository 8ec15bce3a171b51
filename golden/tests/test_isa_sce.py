"""golden/isa/sce.py: SceDesc, sce_error, execute_sce, pack_sce_ports; golden/lowering.py lower_sce.

execute_sce is checked against the independent scalar model golden.fxp_ref.sce_scalar (restoring divider,
fixedpoint-library words) on random and extreme logits, and against the Machine's own call of sce_gradient for the
compiled sce ops of tiny and digits. The helpers here (`sce_compiled`, `random_logits`, `random_sce`) are also the
stimulus of the RTL testbench verif/blocks/tt_sce.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from golden.arch import SCE_ERR_COUNT, SCE_ERR_FRAC, SCE_ERR_LABEL, SCE_ERR_WIDTH, SCE_PORT_W
from golden.compiler import compile_network
from golden.config_file import load_config
from golden.fxp import Fmt
from golden.fxp_ref import sce_scalar
from golden.ir import OpKind
from golden.isa.sce import (
    SCE_ERR_FRAC_MAX,
    SCE_FRAC_Z_MAX,
    SCE_FRAC_Z_MIN,
    SceDesc,
    check_sce,
    execute_sce,
    pack_sce_ports,
    sce_error,
)
from golden.lowering import lower_sce
from golden.semantics import sce_gradient

Z_W = 16  # logit word width of the tests (rtl/tt_sce.v Z_W)


def sce_compiled(model: str):
    """(compiled model, its sce op)."""
    comp = compile_network(load_config(model))
    (op,) = [o for o in comp.train_sample if o.kind == OpKind.SCE]
    return comp, op


def random_logits(rng: np.random.Generator, n: int, classes: int, w: int = Z_W, kind: int | None = None) -> np.ndarray:
    """n logit words of w bits: uniform, all equal, only the two extremes, one huge among small ones, a narrow
    cluster (realistic), or ties of the maximum (pred: the first)."""
    lo, hi = -(1 << (w - 1)), (1 << (w - 1)) - 1
    kind = int(rng.integers(0, 6)) if kind is None else kind
    if kind == 0:
        z = rng.integers(lo, hi + 1, size=n)
    elif kind == 1:
        z = np.full(n, int(rng.integers(lo, hi + 1)))
    elif kind == 2:
        z = rng.choice(np.array([lo, hi]), size=n)
    elif kind == 3:
        z = rng.integers(-8, 9, size=n)
        z[int(rng.integers(0, classes))] = int(rng.choice([hi, lo]))
    elif kind == 4:
        c = int(rng.integers(lo, hi + 1))
        z = np.clip(c + rng.integers(-300, 301, size=n), lo, hi)
    else:
        z = rng.integers(lo, hi + 1, size=n)
        top = int(z[:classes].max())
        z[rng.integers(0, classes, size=int(rng.integers(1, 4)))] = top
    return z.astype(np.int64)


def random_sce(rng: np.random.Generator, out_w: int = SCE_PORT_W, n_max: int = 40, size_pad: int = 20, w: int = Z_W):
    """A random legal descriptor (frac_z over its whole range, err formats that saturate) and its z bank of
    w-bit words."""
    n_out = int(rng.integers(1, n_max + 1))
    classes = n_out if rng.integers(0, 2) else int(rng.integers(1, n_out + 1))
    label = int(rng.integers(0, classes))
    frac_z = int(
        rng.choice(
            [
                SCE_FRAC_Z_MIN,
                SCE_FRAC_Z_MAX,
                -17,
                -16,
                8,
                int(rng.integers(-4, 16)),
                int(rng.integers(SCE_FRAC_Z_MIN, SCE_FRAC_Z_MAX + 1)),
            ]
        )
    )
    err_w = int(rng.integers(2, out_w + 1))
    err_frac = int(rng.choice([0, SCE_ERR_FRAC_MAX, err_w - 2, err_w - 1, err_w, 14, int(rng.integers(0, 32))]))
    err_frac = min(max(err_frac, 0), SCE_ERR_FRAC_MAX)
    z_base, e_base = (int(b) for b in rng.integers(0, size_pad, size=2))
    desc = SceDesc(z_base, e_base, n_out, classes, label, frac_z, err_w, err_frac)
    check_sce(desc)
    assert sce_error(desc, out_w)[0] == 0
    z = rng.integers(-(1 << (w - 1)), 1 << (w - 1), size=n_out + size_pad)
    z[z_base : z_base + n_out] = random_logits(rng, n_out, classes, w)
    return desc, z.astype(np.int64)


def scalar(desc: SceDesc, mem_z) -> tuple[list[int], int, int, int]:
    z = [int(v) for v in mem_z[desc.z_base : desc.z_base + desc.n_out]]
    err, n_sat, p, pred = sce_scalar(z, desc.frac_z, Z_W, desc.label, desc.classes, Fmt(desc.err_w, desc.err_frac))
    return err, n_sat, p[desc.label], pred


def _check_against_scalar(desc, mem_z, mem_e):
    got_e, got_sat, got_p, got_pred = execute_sce(desc, mem_z, mem_e)
    err, n_sat, p_label, pred = scalar(desc, mem_z)
    want = np.array(mem_e, dtype=np.int64, copy=True)
    want[desc.e_base : desc.e_base + desc.n_out] = err
    assert np.array_equal(got_e, want), desc
    assert (got_sat, got_p, got_pred) == (n_sat, p_label, pred), desc
    return got_sat


def test_random_descriptors_match_scalar_model():
    rng = np.random.default_rng(5)
    sat = 0
    for _ in range(400):
        desc, z = random_sce(rng)
        sat += _check_against_scalar(desc, z, rng.integers(-5, 5, size=desc.e_base + desc.n_out + 3))
    assert sat > 0


@pytest.mark.parametrize("kind", range(6))
def test_logit_patterns_every_label(kind):
    """Every logit pattern of random_logits with every label, classes < n_out and the extreme fractions."""
    rng = np.random.default_rng(kind)
    for frac_z in (SCE_FRAC_Z_MIN, -17, -16, 0, 8, 30, SCE_FRAC_Z_MAX):
        z = random_logits(rng, 12, 10, kind=kind)
        for label in range(10):
            desc = SceDesc(0, 3, 12, 10, label, frac_z, 16, 14)
            _check_against_scalar(desc, z, np.zeros(20, dtype=np.int64))


@pytest.mark.parametrize("model", ["tiny", "digits"])
def test_compiled_sce_matches_machine(model):
    """lower_sce of the model's sce op: the fields from the compiled tensors and layout; execute_sce equals the
    Machine's sce_gradient call (formats of the config and moved fractions) and the scalar model."""
    comp, op = sce_compiled(model)
    (z,) = op.ins
    frac = {n: t.fmt.frac for n, t in comp.tensors.items()}
    rng = np.random.default_rng(1)
    fm = comp.cfg.formats
    for frac_z in (frac[z], fm.frac_min, fm.frac_max, int(rng.integers(fm.frac_min, fm.frac_max + 1))):
        for label in range(comp.cfg.classes):
            desc = lower_sce(comp, op, dict(frac, **{z: frac_z}), label)
            assert (desc.n_out, desc.classes, desc.err_w, desc.err_frac) == (
                comp.tensors[op.out].size,
                comp.cfg.classes,
                comp.tensors[op.out].fmt.width,
                frac[op.out],
            )
            assert (desc.z_base, desc.e_base) == (comp.layout[z][1], comp.layout[op.out][1])
            assert desc.banks == (comp.layout[z][0], comp.layout[op.out][0])
            bank = np.zeros(max(desc.z_base, desc.e_base) + desc.n_out, dtype=np.int64)
            bank[desc.z_base : desc.z_base + desc.n_out] = random_logits(rng, desc.n_out, desc.classes)
            got_e, got_sat, got_p, got_pred = execute_sce(desc, bank, bank)
            zs = bank[desc.z_base : desc.z_base + desc.n_out][None, :]
            err, n_sat, p, pred = sce_gradient(
                zs, frac_z, np.array([label]), comp.cfg.classes, comp.tensors[op.out].fmt
            )
            assert np.array_equal(got_e[desc.e_base : desc.e_base + desc.n_out], err[0])
            assert (got_sat, got_p, got_pred) == (n_sat, p[0, label], pred[0])
            _check_against_scalar(desc, bank, bank)


def test_in_place_and_below():
    """e = z (in place) or e below z overlapping it: execute_sce reads every logit before writing."""
    rng = np.random.default_rng(2)
    for e_base in (4, 1):
        mem = rng.integers(-1000, 1000, size=30)
        desc = SceDesc(4, e_base, 10, 10, 3, 8, 16, 14)
        sep = execute_sce(desc, mem.copy(), np.zeros(30, dtype=np.int64))[0]
        got = execute_sce(desc, mem, mem)[0]
        assert np.array_equal(got[e_base : e_base + 10], sep[e_base : e_base + 10])


def test_error_codes():
    ok = SceDesc(0, 16, 10, 8, 7, 8, 16, 14)
    assert sce_error(ok) == (0, "")
    cases = [
        (replace(ok, n_out=0, classes=0, label=0), SCE_ERR_COUNT),
        (replace(ok, classes=0, label=0), SCE_ERR_COUNT),
        (replace(ok, classes=11), SCE_ERR_COUNT),
        (replace(ok, label=8), SCE_ERR_LABEL),
        (replace(ok, label=255), SCE_ERR_LABEL),
        (replace(ok, err_w=1), SCE_ERR_WIDTH),
        (replace(ok, err_w=17), SCE_ERR_WIDTH),
        (replace(ok, frac_z=-33), SCE_ERR_FRAC),
        (replace(ok, frac_z=48), SCE_ERR_FRAC),
        (replace(ok, err_frac=32), SCE_ERR_FRAC),
        (replace(ok, classes=11, label=20, err_w=0, frac_z=63), SCE_ERR_COUNT),  # the lowest
        (replace(ok, label=9, err_w=33, err_frac=40), SCE_ERR_LABEL),
        (replace(ok, err_w=0, err_frac=63), SCE_ERR_WIDTH),
    ]
    for desc, code in cases:
        assert sce_error(desc)[0] == code, desc
        with pytest.raises(ValueError, match=f"error {code}"):
            execute_sce(desc, np.zeros(40), np.zeros(40))
    assert sce_error(replace(ok, err_w=32), out_w_max=32)[0] == 0
    for legal in (
        replace(ok, frac_z=-32),
        replace(ok, frac_z=47),
        replace(ok, err_frac=31),
        replace(ok, err_w=2),
        replace(ok, classes=10, label=9),
        replace(ok, n_out=1, classes=1, label=0),
    ):
        assert sce_error(legal)[0] == 0, legal


def test_fields_and_ports():
    desc = SceDesc(5, 9, 10, 10, 2, -20, 16, 14)
    assert pack_sce_ports(desc) == {
        "z_base": 5,
        "e_base": 9,
        "n_out": 10,
        "classes": 10,
        "label": 2,
        "frac_z": 128 - 20,
        "err_w": 16,
        "err_frac": 14,
    }
    assert pack_sce_ports(replace(desc, frac_z=47))["frac_z"] == 47
    for bad, name in (
        (replace(desc, n_out=256), "n_out"),
        (replace(desc, label=-1), "label"),
        (replace(desc, z_base=1 << 20), "z_base"),
        (replace(desc, e_base=(1 << 20) - 5), "e_base"),
        (replace(desc, frac_z=64), "frac_z"),
        (replace(desc, err_w=64), "err_w"),
        (replace(desc, err_frac=64), "err_frac"),
    ):
        with pytest.raises(ValueError, match=name):
            check_sce(bad)


def test_lowering_rejects():
    comp, op = sce_compiled("tiny")
    frac = {n: t.fmt.frac for n, t in comp.tensors.items()}
    (z,) = op.ins
    with pytest.raises(ValueError, match="not a softmax"):
        lower_sce(comp, comp.train_sample[0], frac, 0)
    with pytest.raises(ValueError, match="label"):
        lower_sce(comp, op, frac, comp.cfg.classes)
    with pytest.raises(ValueError, match="frac_z"):
        lower_sce(comp, op, dict(frac, **{z: 48}), 0)
    with pytest.raises(ValueError, match="err_frac"):
        lower_sce(comp, op, dict(frac, **{op.out: 32}), 0)
    zb = comp.layout[z][1]
    layout = dict(comp.layout, **{op.out: (comp.layout[z][0], zb + 1)})
    with pytest.raises(ValueError, match="overtake"):
        lower_sce(replace(comp, layout=layout), op, frac, 0)
    layout = dict(comp.layout, **{op.out: (comp.layout[z][0], zb)})  # in place is fine
    assert lower_sce(replace(comp, layout=layout), op, frac, 0).e_base == zb
