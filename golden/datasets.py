"""The data sets the reference workloads train on, as float32 pixels in [0, 1] and int64 labels.

- `digits`: the 8x8 digits inside scikit-learn (no download ever). Its held-out split is fixed (stratified
  80/20 drawn from RandomState(0)) and independent of the run seed, so accuracies of different runs compare.
- `fashion-mnist`: the IDX files of Debian's `dataset-fashion-mnist` package (or `data_dir`).
- `mnist`: MNIST-format IDX files in `data_dir`, gzip-compressed or raw.
- `tiny`: a synthetic 4x4, 4-class set for fast tests, generated from RandomState(0).

IDX files are parsed strictly (magic, dimensions, exact byte count, label range): a damaged file is reported
with its path and the problem rather than silently yielding a short or shifted data set.

Every data set names where its samples came from and a SHA-256 of each source's content (`Dataset.sources`), so a
training checkpoint can refuse to resume on other data under the same name.
"""

from __future__ import annotations

import gzip
import hashlib
import math
import struct
import zlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

KNOWN_DATASETS = ("digits", "fashion-mnist", "mnist", "tiny")
FASHION_MNIST_DIR = Path("/usr/share/datasets/fashion-mnist")
IDX_CLASSES = 10
IMAGES_MAGIC = 0x00000803  # unsigned bytes, 3 dimensions (count, rows, cols)
LABELS_MAGIC = 0x00000801  # unsigned bytes, 1 dimension (count)
IDX_NAMES = {  # split -> (images, labels); each may also be stored with a .gz suffix
    "train": ("train-images-idx3-ubyte", "train-labels-idx1-ubyte"),
    "test": ("t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"),
}
DIGITS_TEST_FRACTION = 0.2
SPLIT_SEED = 0
TINY_SIDE, TINY_CLASSES, TINY_TRAIN, TINY_TEST = 4, 4, 512, 128
TINY_NOISE = 0.25  # std of the Gaussian noise around each class prototype (pixels 0.2 or 0.8)


class DatasetError(ValueError):
    """A data set that cannot be loaded; the message names the file (if any) and the problem."""


@dataclass
class Dataset:
    name: str
    train_x: np.ndarray  # float32 [N, D], pixels in [0, 1], images flattened row-major
    train_y: np.ndarray  # int64 [N], 0..classes-1
    test_x: np.ndarray
    test_y: np.ndarray
    classes: int
    image_shape: tuple  # (rows, cols) of one image, prod == D
    sources: dict[str, tuple[str, str]]  # role (an IDX file's base name, or the set's name) -> (where, SHA-256)


def load_dataset(name: str, data_dir: str | None = None) -> Dataset:
    """Load a data set by name; `data_dir` points at IDX files (fashion-mnist, mnist) and is unused otherwise."""
    if name == "digits":
        return _digits()
    if name == "tiny":
        return _tiny()
    if name == "fashion-mnist":
        if data_dir is None:
            return _idx_dataset(
                name,
                FASHION_MNIST_DIR,
                missing_hint="install the Debian package that puts the "
                "files there (apt-get install dataset-fashion-mnist), or pass a directory holding "
                "them as data_dir (DATA_DIR)",
            )
        return _idx_dataset(
            name,
            Path(data_dir),
            missing_hint="put the Fashion-MNIST IDX files there, or leave "
            f"data_dir (DATA_DIR) unset to read those of Debian's dataset-fashion-mnist package in "
            f"{FASHION_MNIST_DIR}",
        )
    if name == "mnist":
        if data_dir is None:
            names = ", ".join(f"{n}[.gz]" for split in IDX_NAMES.values() for n in split)
            raise DatasetError(f"mnist needs data_dir: a directory holding the MNIST IDX files {names}")
        return _idx_dataset(name, Path(data_dir), missing_hint="pass the directory holding them as data_dir")
    raise DatasetError(f"unknown dataset {name!r}; known: {', '.join(KNOWN_DATASETS)}")


# --- built-in sets ----------------------------------------------------------------------------------------


def _digits() -> Dataset:
    from sklearn.datasets import load_digits  # imported here: sklearn is slow to import, IDX sets skip it

    bunch = load_digits()
    x = (bunch.data / 16).astype(np.float32)
    y = bunch.target.astype(np.int64)
    held_out = np.zeros(len(y), dtype=bool)
    held_out[stratified_test_indices(y, DIGITS_TEST_FRACTION)] = True
    return Dataset(
        "digits",
        x[~held_out],
        y[~held_out],
        x[held_out],
        y[held_out],
        classes=10,
        image_shape=(8, 8),
        sources={"digits": ("scikit-learn's load_digits", _digest(x, y))},
    )


def stratified_test_indices(y: np.ndarray, fraction: float) -> np.ndarray:
    """Sorted indices of the held-out samples: round(fraction * n_c) of each class c, drawn from one
    RandomState(SPLIT_SEED) permuting the classes in increasing order (so the split never depends on a run)."""
    rs = np.random.RandomState(SPLIT_SEED)
    picks = [rs.permutation(np.flatnonzero(y == c))[: round(fraction * np.count_nonzero(y == c))] for c in np.unique(y)]
    return np.sort(np.concatenate(picks))


def _tiny() -> Dataset:
    """Each class is a random pattern of 0.2/0.8 pixels; samples add Gaussian noise, clipped to [0, 1].
    Nearly linearly separable, so a small network learns it in a few epochs even at low precision."""
    rs = np.random.RandomState(0)
    pixels = TINY_SIDE * TINY_SIDE
    prototypes = np.where(rs.rand(TINY_CLASSES, pixels) > 0.5, 0.8, 0.2)

    def sample(n: int) -> tuple[np.ndarray, np.ndarray]:
        y = rs.permutation(np.arange(n) % TINY_CLASSES).astype(np.int64)
        x = np.clip(prototypes[y] + rs.normal(0.0, TINY_NOISE, (n, pixels)), 0.0, 1.0).astype(np.float32)
        return x, y

    train_x, train_y = sample(TINY_TRAIN)
    test_x, test_y = sample(TINY_TEST)
    return Dataset(
        "tiny",
        train_x,
        train_y,
        test_x,
        test_y,
        TINY_CLASSES,
        (TINY_SIDE, TINY_SIDE),
        sources={"tiny": ("generated from RandomState(0)", _digest(train_x, train_y, test_x, test_y))},
    )


def _digest(*arrays: np.ndarray) -> str:
    """SHA-256 of arrays' contents, in order (a built-in set has no files of its own to hash)."""
    h = hashlib.sha256()
    for a in arrays:
        h.update(np.ascontiguousarray(a).tobytes())
    return h.hexdigest()


# --- IDX files ----------------------------------------------------------------------------------------------


def _idx_dataset(name: str, directory: Path, missing_hint: str) -> Dataset:
    splits: dict[str, tuple[Path, np.ndarray, np.ndarray]] = {}
    sources: dict[str, tuple[str, str]] = {}
    for split, (images_name, labels_name) in IDX_NAMES.items():
        images_path = _find_idx(directory, images_name, missing_hint)
        labels_path = _find_idx(directory, labels_name, missing_hint)
        splits[split] = (images_path, *_read_idx_pair(images_path, labels_path, sources))
    (train_path, train_x, train_y), (test_path, test_x, test_y) = splits["train"], splits["test"]
    if train_x.shape[1:] != test_x.shape[1:]:
        raise DatasetError(
            f"{test_path}: images are {_dims(test_x.shape[1:])}, but {train_path} has {_dims(train_x.shape[1:])}"
        )
    image_shape = tuple(train_x.shape[1:])
    return Dataset(name, _pixels(train_x), train_y, _pixels(test_x), test_y, IDX_CLASSES, image_shape, sources)


def _find_idx(directory: Path, base: str, missing_hint: str) -> Path:
    """The compressed file if present, else the raw one."""
    for candidate in (directory / f"{base}.gz", directory / base):
        if candidate.is_file():
            return candidate
    raise DatasetError(f"{directory / base}.gz: no such file (nor uncompressed {base}); {missing_hint}")


def _read_idx_pair(images_path: Path, labels_path: Path, sources: dict) -> tuple[np.ndarray, np.ndarray]:
    """The images and labels of one split; adds each file's (path, SHA-256 of its samples) to `sources` under its
    base name: the same data, compressed or not, in any directory, has one digest."""
    images = read_idx(images_path, IMAGES_MAGIC)
    labels = read_idx(labels_path, LABELS_MAGIC)
    for path, array in ((images_path, images), (labels_path, labels)):
        sources[path.name.removesuffix(".gz")] = (str(path), _digest(array))
    if len(labels) != len(images):
        raise DatasetError(f"{labels_path}: {len(labels)} labels, but {images_path} has {len(images)} images")
    bad = np.flatnonzero(labels >= IDX_CLASSES)
    if bad.size:
        raise DatasetError(
            f"{labels_path}: label {labels[bad[0]]} at index {bad[0]} is outside "
            f"0..{IDX_CLASSES - 1} ({bad.size} such labels)"
        )
    return images, labels.astype(np.int64)


def _pixels(images: np.ndarray) -> np.ndarray:
    """uint8 -> float32 in [0, 1] in one pass: no intermediate float array (60000 x 784 is 188 MB)."""
    return np.divide(images.reshape(len(images), -1), np.float32(255), dtype=np.float32)


def _dims(shape: tuple) -> str:
    return "x".join(str(d) for d in shape)


def read_idx(path: str | Path, magic: int) -> np.ndarray:
    """A uint8 IDX file (gzip-compressed if its name ends in .gz) as an array of its declared dimensions.

    `magic` is the expected first word; its low byte is the number of dimensions. The file must hold exactly
    the header plus prod(dims) bytes: a short file is truncated, a longer one is not the file it claims."""
    path = Path(path)
    data = _read_bytes(path)
    ndim = magic & 0xFF
    header = 4 + 4 * ndim
    if len(data) < 4:
        raise DatasetError(f"{path}: truncated: {len(data)} bytes, too short for the 4-byte magic number")
    found = int.from_bytes(data[:4], "big")
    if found != magic:
        kind = "images" if magic == IMAGES_MAGIC else "labels"
        raise DatasetError(f"{path}: bad magic number 0x{found:08x}, expected 0x{magic:08x} ({kind})")
    if len(data) < header:
        raise DatasetError(f"{path}: truncated header: {len(data)} bytes, {ndim} dimensions need {header}")
    dims = struct.unpack(f">{ndim}I", data[4:header])
    if 0 in dims:
        raise DatasetError(f"{path}: empty: dimensions {_dims(dims)}")
    expected = header + math.prod(dims)
    if len(data) < expected:
        raise DatasetError(f"{path}: truncated: {len(data)} bytes, dimensions {_dims(dims)} need {expected}")
    if len(data) > expected:
        raise DatasetError(
            f"{path}: {len(data) - expected} trailing bytes after the {expected} that dimensions {_dims(dims)} need"
        )
    return np.frombuffer(data, dtype=np.uint8, offset=header).reshape(dims)


def _read_bytes(path: Path) -> bytes:
    try:
        raw = path.read_bytes()
    except OSError as e:
        raise DatasetError(f"{path}: cannot read: {e.strerror}") from None
    if path.suffix != ".gz":
        return raw
    try:
        return gzip.decompress(raw)
    except (OSError, EOFError, zlib.error) as e:
        raise DatasetError(f"{path}: not a valid gzip file: {e}") from None
