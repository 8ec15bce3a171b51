"""Data sets: the built-in sets' shapes and fixed splits, Debian's Fashion-MNIST, and the strict IDX parser."""

import gzip
import hashlib
import re
import struct
import time
import warnings

import numpy as np
import pytest

from golden import datasets
from golden.datasets import (
    FASHION_MNIST_DIR,
    IDX_NAMES,
    IMAGES_MAGIC,
    KNOWN_DATASETS,
    LABELS_MAGIC,
    DatasetError,
    load_dataset,
    read_idx,
    stratified_test_indices,
)


def _check_layout(ds, n_inputs, classes):
    for x, y in ((ds.train_x, ds.train_y), (ds.test_x, ds.test_y)):
        assert x.dtype == np.float32 and y.dtype == np.int64
        assert x.ndim == 2 and x.shape[1] == n_inputs and len(x) == len(y)
        assert 0.0 <= x.min() and x.max() <= 1.0
        assert set(np.unique(y)) == set(range(classes))
    assert ds.classes == classes and np.prod(ds.image_shape) == n_inputs


# --- digits ----------------------------------------------------------------------------------------------


def test_digits_shapes_and_ranges():
    ds = load_dataset("digits")
    _check_layout(ds, 64, 10)
    assert ds.name == "digits" and ds.image_shape == (8, 8)
    assert (len(ds.train_x), len(ds.test_x)) == (1438, 359)
    assert ds.train_x.max() == 1.0  # pixels 0..16 scaled by 1/16


def test_digits_split_is_stratified():
    ds = load_dataset("digits")
    for c in range(10):
        n_test, n_train = np.count_nonzero(ds.test_y == c), np.count_nonzero(ds.train_y == c)
        assert abs(n_test - 0.2 * (n_test + n_train)) <= 0.5


def test_digits_split_is_fixed_and_ignores_the_global_seed():
    """Pinned: changing the split would silently change every reported digits accuracy."""
    np.random.seed(1234)
    a = load_dataset("digits")
    np.random.seed(99)
    b = load_dataset("digits")
    assert np.array_equal(a.test_x, b.test_x) and np.array_equal(a.train_y, b.train_y)
    from sklearn.datasets import load_digits

    idx = stratified_test_indices(load_digits().target, 0.2)
    assert idx[:8].tolist() == [3, 7, 13, 19, 36, 38, 43, 48]
    assert hashlib.sha256(idx.astype("<i8").tobytes()).hexdigest()[:16] == "3530be80b9605f4c"


def test_digits_train_and_test_are_disjoint_and_complete():
    from sklearn.datasets import load_digits

    y = load_digits().target
    idx = stratified_test_indices(y, 0.2)
    assert len(np.unique(idx)) == len(idx) == 359
    ds = load_dataset("digits")
    assert len(ds.train_y) + len(ds.test_y) == len(y)
    assert np.array_equal(np.sort(np.concatenate([ds.train_y, ds.test_y])), np.sort(y))


# --- tiny -------------------------------------------------------------------------------------------------


def test_tiny_is_deterministic_and_balanced():
    a, b = load_dataset("tiny"), load_dataset("tiny")
    _check_layout(a, 16, 4)
    assert a.image_shape == (4, 4) and (len(a.train_x), len(a.test_x)) == (512, 128)
    assert np.array_equal(a.train_x, b.train_x) and np.array_equal(a.test_y, b.test_y)
    assert np.bincount(a.train_y).tolist() == [128] * 4 and np.bincount(a.test_y).tolist() == [32] * 4
    assert hashlib.sha256(a.train_x.tobytes()).hexdigest()[:16] == "5f679a42970cd3a8"


def test_tiny_is_learnable_by_a_small_mlp():
    """The tiny config's recipe (16-8-4, SGD lr 0.1 momentum 0.9, batch 8, 5 epochs) in float exceeds 90%."""
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.neural_network import MLPClassifier

    ds = load_dataset("tiny")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        mlp = MLPClassifier(
            (8,), solver="sgd", batch_size=8, learning_rate_init=0.1, momentum=0.9, max_iter=5, random_state=0
        ).fit(ds.train_x, ds.train_y)
    assert mlp.score(ds.test_x, ds.test_y) > 0.9


# --- names --------------------------------------------------------------------------------------------------


def test_unknown_name_lists_the_known_ones():
    with pytest.raises(DatasetError, match=r"unknown dataset 'cifar'; known: digits, fashion-mnist, mnist, tiny"):
        load_dataset("cifar")
    assert KNOWN_DATASETS == ("digits", "fashion-mnist", "mnist", "tiny")


def test_mnist_needs_data_dir():
    with pytest.raises(DatasetError, match=r"mnist needs data_dir.*train-images-idx3-ubyte\[\.gz\]"):
        load_dataset("mnist")


def test_missing_file_names_the_path(tmp_path):
    expected = re.escape(str(tmp_path / "train-images-idx3-ubyte")) + r"\.gz: no such file"
    with pytest.raises(DatasetError, match=expected):
        load_dataset("mnist", str(tmp_path))


def test_missing_fashion_mnist_says_how_to_install(tmp_path, monkeypatch):
    """Without data_dir the files come from Debian's package, so the hint names it."""
    monkeypatch.setattr(datasets, "FASHION_MNIST_DIR", tmp_path)
    with pytest.raises(DatasetError, match=r"no such file.*apt-get install dataset-fashion-mnist"):
        load_dataset("fashion-mnist")


def test_fashion_mnist_data_dir_without_the_files_says_to_put_them_there(tmp_path):
    """A given data_dir is where the files must be: no package puts them there, so no apt-get in the hint."""
    with pytest.raises(DatasetError) as e:
        load_dataset("fashion-mnist", str(tmp_path))
    msg = str(e.value)
    assert msg.startswith(str(tmp_path / "train-images-idx3-ubyte")) and "put the Fashion-MNIST IDX files there" in msg
    assert "apt-get" not in msg and str(FASHION_MNIST_DIR) in msg


# --- Fashion-MNIST from Debian ----------------------------------------------------------------------------


@pytest.mark.skipif(
    not all((FASHION_MNIST_DIR / f"{n}.gz").is_file() for s in IDX_NAMES.values() for n in s),
    reason=f"Fashion-MNIST not in {FASHION_MNIST_DIR} (apt-get install dataset-fashion-mnist)",
)
def test_fashion_mnist_loads_fast():
    """Under 2 s of this process's CPU time (wall time also counts whatever else the machine runs)."""
    start = time.process_time()
    ds = load_dataset("fashion-mnist")
    elapsed = time.process_time() - start
    _check_layout(ds, 784, 10)
    assert ds.image_shape == (28, 28) and (len(ds.train_x), len(ds.test_x)) == (60000, 10000)
    assert np.bincount(ds.train_y).tolist() == [6000] * 10 and np.bincount(ds.test_y).tolist() == [1000] * 10
    assert elapsed < 2.0, f"loading took {elapsed:.2f} s of CPU time"


# --- the IDX parser, on files written to tmp_path ------------------------------------------------------


def _idx_bytes(magic, dims, payload):
    return struct.pack(">I", magic) + struct.pack(f">{len(dims)}I", *dims) + bytes(payload)


def _write(path, data, compress):
    path = path.with_name(path.name + ".gz") if compress else path
    path.write_bytes(gzip.compress(data) if compress else data)
    return path


def _small_set(rng, n):
    images = rng.randint(0, 256, (n, 3, 2)).astype(np.uint8)
    labels = rng.randint(0, 10, n).astype(np.uint8)
    return images, labels


def _write_set(directory, compress=True, sizes=(20, 7), overrides=None):
    """A valid 3x2-pixel MNIST-format set; `overrides` maps a file's base name to the bytes to write instead."""
    rng = np.random.RandomState(5)
    arrays, paths = {}, {}
    for split, n in zip(("train", "test"), sizes):
        images, labels = _small_set(rng, n)
        images_name, labels_name = IDX_NAMES[split]
        arrays[split] = images, labels
        for name, data in (
            (images_name, _idx_bytes(IMAGES_MAGIC, images.shape, images.tobytes())),
            (labels_name, _idx_bytes(LABELS_MAGIC, labels.shape, labels.tobytes())),
        ):
            data = (overrides or {}).get(name, data)
            paths[name] = _write(directory / name, data, compress)
    return arrays, paths


@pytest.mark.parametrize("compress", [True, False], ids=["gz", "raw"])
def test_valid_idx_set_loads(tmp_path, compress):
    arrays, _ = _write_set(tmp_path, compress)
    ds = load_dataset("mnist", str(tmp_path))
    assert ds.name == "mnist" and ds.image_shape == (3, 2) and ds.classes == 10
    for (x, y), split in (((ds.train_x, ds.train_y), "train"), ((ds.test_x, ds.test_y), "test")):
        images, labels = arrays[split]
        assert x.dtype == np.float32 and y.dtype == np.int64
        assert np.array_equal(x, images.reshape(len(images), -1).astype(np.float32) / np.float32(255))
        assert np.array_equal(y, labels)


def test_gz_and_raw_may_be_mixed(tmp_path):
    arrays, paths = _write_set(tmp_path, compress=False)
    raw = paths["t10k-labels-idx1-ubyte"]
    _write(raw, raw.read_bytes(), compress=True)
    raw.unlink()
    ds = load_dataset("mnist", str(tmp_path))
    assert np.array_equal(ds.test_y, arrays["test"][1])


def test_sources_digest_the_samples_of_each_file(tmp_path):
    """The same samples, compressed or not and in another directory, have the same digests; other images change
    only their file's digest, which is the SHA-256 of the samples after the header."""
    for d in "abc":
        (tmp_path / d).mkdir()
    arrays, _ = _write_set(tmp_path / "a", compress=True)
    _write_set(tmp_path / "b", compress=False)
    _write_set(
        tmp_path / "c", overrides={"train-images-idx3-ubyte": _idx_bytes(IMAGES_MAGIC, (20, 3, 2), bytes(range(120)))}
    )
    a, b, c = (load_dataset("mnist", str(tmp_path / d)).sources for d in "abc")
    assert a.keys() == {n for split in IDX_NAMES.values() for n in split}
    assert a["train-images-idx3-ubyte"] == (
        str(tmp_path / "a" / "train-images-idx3-ubyte.gz"),
        hashlib.sha256(arrays["train"][0].tobytes()).hexdigest(),
    )
    assert {k: v[1] for k, v in a.items()} == {k: v[1] for k, v in b.items()}
    assert [k for k in a if a[k][1] != c[k][1]] == ["train-images-idx3-ubyte"]


def test_fashion_mnist_reads_a_given_data_dir(tmp_path):
    _write_set(tmp_path)
    assert load_dataset("fashion-mnist", str(tmp_path)).name == "fashion-mnist"


def _expect(path, problem, directory):
    with pytest.raises(DatasetError, match=re.escape(str(path)) + ": " + problem):
        load_dataset("mnist", str(directory))


@pytest.mark.parametrize("compress", [True, False], ids=["gz", "raw"])
def test_bad_image_magic(tmp_path, compress):
    bad = _idx_bytes(0x00000802, (20, 3, 2), bytes(120))
    _, paths = _write_set(tmp_path, compress, overrides={"train-images-idx3-ubyte": bad})
    _expect(paths["train-images-idx3-ubyte"], r"bad magic number 0x00000802, expected 0x00000803", tmp_path)


def test_labels_file_in_place_of_images(tmp_path):
    swapped = _idx_bytes(LABELS_MAGIC, (7,), bytes(7))
    _, paths = _write_set(tmp_path, overrides={"t10k-images-idx3-ubyte": swapped})
    _expect(paths["t10k-images-idx3-ubyte"], r"bad magic number 0x00000801, expected 0x00000803 \(images\)", tmp_path)


def test_bad_label_magic(tmp_path):
    bad = b"\x1f\x8b\x08\x00" + bytes(20)  # e.g. a doubly gzipped file
    _, paths = _write_set(tmp_path, overrides={"train-labels-idx1-ubyte": bad})
    _expect(paths["train-labels-idx1-ubyte"], r"bad magic number 0x1f8b0800, expected 0x00000801 \(labels\)", tmp_path)


@pytest.mark.parametrize("compress", [True, False], ids=["gz", "raw"])
def test_truncated_pixels(tmp_path, compress):
    short = _idx_bytes(IMAGES_MAGIC, (20, 3, 2), bytes(119))
    _, paths = _write_set(tmp_path, compress, overrides={"train-images-idx3-ubyte": short})
    _expect(paths["train-images-idx3-ubyte"], r"truncated: 135 bytes, dimensions 20x3x2 need 136", tmp_path)


def test_truncated_header(tmp_path):
    short = struct.pack(">II", IMAGES_MAGIC, 20)
    _, paths = _write_set(tmp_path, overrides={"train-images-idx3-ubyte": short})
    _expect(paths["train-images-idx3-ubyte"], r"truncated header: 8 bytes, 3 dimensions need 16", tmp_path)


def test_file_shorter_than_magic(tmp_path):
    _, paths = _write_set(tmp_path, overrides={"t10k-labels-idx1-ubyte": b"\x00\x00"})
    _expect(paths["t10k-labels-idx1-ubyte"], r"truncated: 2 bytes, too short for the 4-byte magic", tmp_path)


@pytest.mark.parametrize("compress", [True, False], ids=["gz", "raw"])
def test_trailing_bytes(tmp_path, compress):
    long = _idx_bytes(LABELS_MAGIC, (7,), bytes(7) + b"\x00\x00\x00")
    _, paths = _write_set(tmp_path, compress, overrides={"t10k-labels-idx1-ubyte": long})
    _expect(paths["t10k-labels-idx1-ubyte"], r"3 trailing bytes after the 15 that dimensions 7 need", tmp_path)


def test_empty_dimension(tmp_path):
    empty = _idx_bytes(IMAGES_MAGIC, (0, 3, 2), b"")
    _, paths = _write_set(tmp_path, overrides={"t10k-images-idx3-ubyte": empty})
    _expect(paths["t10k-images-idx3-ubyte"], r"empty: dimensions 0x3x2", tmp_path)


def test_image_label_count_mismatch(tmp_path):
    labels = _idx_bytes(LABELS_MAGIC, (19,), bytes(19))
    _, paths = _write_set(tmp_path, overrides={"train-labels-idx1-ubyte": labels})
    _expect(
        paths["train-labels-idx1-ubyte"],
        r"19 labels, but " + re.escape(str(paths["train-images-idx3-ubyte"])) + " has 20 images",
        tmp_path,
    )


def test_label_out_of_range(tmp_path):
    labels = _idx_bytes(LABELS_MAGIC, (7,), bytes([0, 1, 2, 10, 4, 255, 6]))
    _, paths = _write_set(tmp_path, overrides={"t10k-labels-idx1-ubyte": labels})
    _expect(paths["t10k-labels-idx1-ubyte"], r"label 10 at index 3 is outside 0\.\.9 \(2 such labels\)", tmp_path)


def test_train_and_test_image_sizes_differ(tmp_path):
    images = _idx_bytes(IMAGES_MAGIC, (7, 2, 3), bytes(42))
    _, paths = _write_set(tmp_path, overrides={"t10k-images-idx3-ubyte": images})
    _expect(
        paths["t10k-images-idx3-ubyte"],
        r"images are 2x3, but " + re.escape(str(paths["train-images-idx3-ubyte"])) + " has 3x2",
        tmp_path,
    )


def test_corrupt_gzip(tmp_path):
    _, paths = _write_set(tmp_path)
    path = paths["train-images-idx3-ubyte"]
    path.write_bytes(path.read_bytes()[:-12])
    _expect(path, r"not a valid gzip file", tmp_path)


def test_read_idx_returns_declared_dimensions(tmp_path):
    path = tmp_path / "x-idx3-ubyte"
    path.write_bytes(_idx_bytes(IMAGES_MAGIC, (2, 3, 4), range(24)))
    arr = read_idx(path, IMAGES_MAGIC)
    assert arr.shape == (2, 3, 4) and arr.dtype == np.uint8 and arr[1, 2, 3] == 23
