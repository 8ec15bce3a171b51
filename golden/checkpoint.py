"""A training run's files: the lock on its output directory, the checkpoint that resumes it bit-exactly, and files
replaced whole, so that a failed run leaves the last good ones.

Nothing a run was given is trusted: `load_checkpoint` refuses a checkpoint that is damaged, belongs to another run or
data, or does not fit the network, and `locked` a second run on an OUT directory in use, each with a TrainError that
names the file and what to do. A checkpoint holds a SHA-256 of its content and of the data set's sources.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import zipfile
import zlib
from pathlib import Path

import numpy as np

from golden.compiler import compile_network
from golden.config import NetConfig
from golden.config_file import config_to_dict, with_ranks
from golden.datasets import Dataset
from golden.ir import Compiled
from golden.machine import Machine

CHECKPOINT = "checkpoint.npz"
LOCK = "lock"


class TrainError(ValueError):
    """A run that cannot start or go on as asked; the message names the setting or file and what to do."""


@contextlib.contextmanager
def locked(out: Path):
    """OUT/lock, holding this process's pid, for as long as a run writes to `out` (made if missing): a second run on
    it is refused while the first is alive. The lock is an flock on that file, which the kernel drops when its
    process dies, so a lock file left by a dead run is taken over."""
    out.mkdir(parents=True, exist_ok=True)
    path = out / LOCK
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.read(fd, 32).decode(errors="replace").strip() or "unknown"
            os.close(fd)
            raise TrainError(
                f"{out} is in use by another run (pid {holder}, see {path}); wait for it to end or "
                f"use another OUT directory"
            ) from None
        try:
            if os.stat(path).st_ino == os.fstat(fd).st_ino:
                break
        except FileNotFoundError:
            pass
        os.close(fd)  # the holder removed the file between our open and our lock: lock the one there now
    try:
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        yield
    finally:
        path.unlink(missing_ok=True)
        os.close(fd)


def run_identity(cfg: NetConfig, data: Dataset, seed: int) -> dict:
    """What a checkpoint must match to be resumed; the epoch count may grow (to extend a run, load_checkpoint)."""
    config = config_to_dict(cfg)
    del config["train"]["epochs"]
    return {"config": config, "dataset": data.name, "seed": seed, "golden": golden_version()}


def content_digest(arrays: dict[str, np.ndarray]) -> str:
    """SHA-256 of a checkpoint's entries: names, dtypes, shapes and bytes."""
    h = hashlib.sha256()
    for name in sorted(arrays):
        a = np.ascontiguousarray(arrays[name])
        h.update(f"{name}\0{a.dtype.str}\0{a.shape}\0".encode())
        h.update(a.tobytes())
    return h.hexdigest()


def _unusable(path: Path, problem: str) -> TrainError:
    return TrainError(f"{path} {problem}; use another OUT directory, or delete it to start this run afresh")


def read_checkpoint(path: Path) -> tuple[dict, dict[str, np.ndarray]]:
    """The meta and the arrays of a checkpoint file whose content matches its digest (TrainError otherwise)."""
    unreadable = (OSError, EOFError, ValueError, zipfile.BadZipFile, zlib.error)  # np.load's, and its members'
    try:
        archive = np.load(path, allow_pickle=False)
    except unreadable as e:
        raise _unusable(path, f"is damaged: not a readable .npz archive ({e})") from None
    if not isinstance(archive, np.lib.npyio.NpzFile):
        raise _unusable(path, "is damaged: not a readable .npz archive (it holds one .npy array)")
    try:
        with archive:
            arrays = {k: archive[k] for k in archive.files}
    except unreadable as e:
        raise _unusable(path, f"is damaged: not a readable .npz archive ({e})") from None
    if "meta" not in arrays:
        raise _unusable(path, "is damaged: it has no meta entry")
    try:
        meta = json.loads(str(arrays["meta"]))
    except json.JSONDecodeError:
        raise _unusable(path, "is damaged: its meta entry is not JSON") from None
    if not isinstance(meta, dict) or not isinstance(meta.get("identity"), dict):
        raise _unusable(path, "is damaged: its meta entry is not a checkpoint's")
    if meta["identity"].get("golden") != golden_version():
        raise _unusable(
            path,
            "was written by another version of the golden model (its modules changed since), whose numbers may differ",
        )
    stored = arrays.pop("digest", None)
    if stored is None or str(stored) != content_digest(arrays):
        raise _unusable(path, "is damaged: its content does not match the digest stored with it")
    return meta, arrays


def load_checkpoint(
    path: Path, cfg: NetConfig, data: Dataset, seed: int, epochs: int, comp: Compiled
) -> tuple[dict, np.ndarray, Machine] | None:
    """The checkpoint at `path` (None if there is none) checked against the run that resumes it: its meta, its
    permutation of the epoch in progress (empty between epochs) and a Machine of its network (`comp`, or `cfg`
    recompiled at the ranks it was recompiled at) holding its state. A TrainError says what does not match: the
    file (read_checkpoint), the run (config, dataset name, seed), the data set's sources (their digests), the epochs
    (fewer than it trained, or another count under a schedule that spans the run) or the network (the names,
    dtypes, shapes and value ranges of its tensors, its formats)."""
    if not path.exists():
        return None
    meta, arrays = read_checkpoint(path)
    if meta["identity"] != run_identity(cfg, data, seed):
        raise _unusable(path, "belongs to another run (config, dataset or seed differ)")
    for role, (where, digest) in data.sources.items():
        if meta.get("data", {}).get(role) != digest:
            raise TrainError(
                f"{path} was trained on other data than {where} ({role} differs); resume it with the "
                f"data it started with (the same DATA_DIR), or use another OUT directory"
            )
    perm = arrays.get("perm", np.zeros(0, dtype=np.int64))
    started = meta["epoch"] + (perm.size > 0)  # the epochs it trained, the one in progress included
    if started > epochs:
        raise TrainError(
            f"{path} holds a run that has trained {started} epochs, more than the {epochs} asked for, "
            f"and a shorter run is not refused silently; ask for at least {started} epochs (EPOCHS) to "
            f"go on with it, or use another OUT directory"
        )
    if epochs != meta["epochs"] and cfg.train.lr_schedule != "constant":
        raise TrainError(
            f"{path} holds a run of {meta['epochs']} epochs whose {cfg.train.lr_schedule} learning-rate "
            f"schedule spans the whole run, so it resumes only with {meta['epochs']} epochs (EPOCHS); "
            f"use another OUT directory for {epochs}"
        )
    if meta.get("recompiled") is not None:  # saved after train.rank.recompile
        comp = compile_network(with_ranks(cfg, meta["recompiled"]))
    golden = Machine(comp, seed)
    mem = {k[4:]: a for k, a in arrays.items() if k.startswith("mem/")}
    _check_state(path, meta, mem, golden)
    golden.load_state_dict({**meta, "mem": mem})
    return meta, perm, golden


def _check_state(path: Path, meta: dict, mem: dict[str, np.ndarray], golden: Machine) -> None:
    """The checkpoint's tensors and formats are those of `golden`'s network: the same names, int64 of the same
    shapes, every value within its tensor's width; the same fraction-bit entries, the adaptive ones within
    frac_min..frac_max."""
    expected = golden.mem
    if mem.keys() != expected.keys():
        missing, extra = sorted(expected.keys() - mem.keys()), sorted(mem.keys() - expected.keys())
        raise _unusable(
            path, f"does not hold the network's tensors (missing {missing or 'none'}, unexpected {extra or 'none'})"
        )
    for name, a in mem.items():
        if a.dtype != np.int64 or a.shape != expected[name].shape:
            raise _unusable(
                path, f"is damaged: {name} is {a.dtype} {a.shape}, the network's is int64 {expected[name].shape}"
            )
        fmt = golden.fmt(name)
        if a.size and (a.min() < fmt.qmin or a.max() > fmt.qmax):
            raise _unusable(path, f"is damaged: {name} holds values outside its {fmt.width}-bit format")
    frac = meta.get("frac")
    if (
        not isinstance(frac, dict)
        or frac.keys() != golden.frac.keys()
        or not all(isinstance(f, int) and not isinstance(f, bool) for f in frac.values())
    ):
        raise _unusable(path, "is damaged: its formats are not the network's")
    formats = golden.cfg.formats
    for name, tensor in golden.comp.tensors.items():
        if tensor.adaptive and not formats.frac_min <= frac[name] <= formats.frac_max:
            raise _unusable(
                path,
                f"is damaged: {name}'s fraction bits {frac[name]} are outside frac_min..frac_max "
                f"({formats.frac_min}..{formats.frac_max})",
            )


def replace_file(path: Path, text: str) -> None:
    """Write `path` whole or not at all: a run killed while writing leaves the previous file."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text)
    tmp.replace(path)


def replace_npz(path: Path, **arrays) -> None:
    """np.savez to `path`, whole or not at all (replace_file)."""
    tmp = path.with_name(path.stem + ".tmp.npz")  # np.savez adds .npz to a name without it
    np.savez(tmp, **arrays)
    tmp.replace(path)


def golden_version() -> str:
    """A digest of the golden model's sources: a checkpoint resumes only under the arithmetic that wrote it."""
    root = Path(__file__).parent
    h = hashlib.sha256()
    for f in sorted(root.rglob("*.py")):
        if "tests" not in f.relative_to(root).parts:
            h.update(f.relative_to(root).as_posix().encode() + b"\0" + f.read_bytes())
    return h.hexdigest()[:16]
