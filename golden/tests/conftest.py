"""Fixtures of the training tests (test_train.py, test_train_refusals.py, test_rank_schedule.py)."""

from __future__ import annotations

import signal

import pytest

import golden.train as train_mod
from golden.datasets import load_dataset


@pytest.fixture(autouse=True)
def _restore_signals():
    """Run.run installs SIGINT/SIGTERM handlers; give pytest its own back afterwards."""
    saved = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    yield
    for s, h in saved.items():
        signal.signal(s, h)


@pytest.fixture(scope="module")
def tiny_data():
    return load_dataset("tiny")


@pytest.fixture
def no_plots(monkeypatch):
    monkeypatch.setattr(train_mod, "plot_history", lambda history, out, rank_schedule=None: None)
