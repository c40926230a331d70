"""Where an export writes: a hidden folder beside OUT, renamed to OUT only once it is verified.

An export takes minutes (25 for 0.8B on a loaded machine). Written in place, OUT would hold a
half-written folder all that time, or for good after a failure or a kill, and whatever lists
models (`botpsy-web serve`'s /models/index.json, `build-site`) would offer it. So:

- the export writes `.OUT.partial-<pid>` in OUT's parent (same file system: the rename is atomic);
- success: an earlier OUT is moved aside and replaced by the new folder (renames only, at the end);
- a failed verification: the folder is kept as `.OUT.failed` for inspection; OUT is untouched;
- any other failure or an interrupt: the partial folder is removed; OUT is untouched;
- a kill leaves `.OUT.partial-<pid>`: the next export to OUT removes it once that process is gone.

Model listings skip folders whose name starts with a dot, so none of these is ever offered.
"""

import os
import shutil
from pathlib import Path

from .errors import OutFolderError
from .folder import MANIFEST


def check_out_folder(out: Path) -> Path:
    """OUT as an absolute path, when an export may write it: absent, empty, or an earlier export
    (it holds manifest.json). Anything else would be deleted by the final replace: an error."""
    out = Path(os.path.abspath(out))
    if not out.name:
        raise OutFolderError(f"--out {out} is a file system root: name a folder to export to")
    if out.is_symlink() and not out.exists():
        raise OutFolderError(f"--out {out} is a broken symbolic link: remove it or pick another --out")
    if out.exists() and not out.is_dir():
        raise OutFolderError(f"--out {out} is a file, not a folder: pick another --out")
    if out.is_dir() and any(out.iterdir()) and not (out / MANIFEST).is_file():
        raise OutFolderError(f"--out {out} exists and holds no {MANIFEST}, so it is no exported folder an export "
                             "may replace: remove it or pick another --out")
    return out


def partial_folder(out: Path, pid: int) -> Path:
    return out.with_name(f".{out.name}.partial-{pid}")


def failed_folder(out: Path) -> Path:
    return out.with_name(f".{out.name}.failed")


class StagedFolder:
    """The folder an export writes into; `commit` makes it OUT, `keep_as_failed` or `discard` do not."""

    def __init__(self, out_dir):
        self.out = check_out_folder(out_dir)
        self.out.parent.mkdir(parents=True, exist_ok=True)
        remove_abandoned_partials(self.out)
        self.path = partial_folder(self.out, os.getpid())
        _remove(self.path)  # this process's own leftover (an export in the same process that was interrupted)
        self.path.mkdir()

    def commit(self) -> Path:
        """Replace OUT by the written folder. Checked again here: OUT may have changed in the meantime."""
        check_out_folder(self.out)
        aside = self.out.with_name(f".{self.out.name}.replaced-{os.getpid()}")  # an earlier OUT, moved aside
        _remove(aside)
        if self.out.is_symlink() or self.out.exists():
            os.rename(self.out, aside)
        try:
            os.rename(self.path, self.out)
        except BaseException:
            if aside.is_symlink() or aside.exists():
                os.rename(aside, self.out)
            raise
        _remove(aside)
        _remove(failed_folder(self.out))  # an earlier failure's folder says nothing about this export
        return self.out

    def keep_as_failed(self) -> Path:
        """Keep what was written, for inspection, under a hidden name no listing offers."""
        failed = failed_folder(self.out)
        _remove(failed)
        os.rename(self.path, failed)
        return failed

    def discard(self):
        _remove(self.path)


def remove_abandoned_partials(out: Path):
    """Remove what killed exports left beside OUT: `.OUT.partial-<pid>` (and `.OUT.replaced-<pid>`,
    when killed between the final renames) of processes that no longer run. A running export's
    folders are left alone."""
    if not out.parent.is_dir():
        return
    prefixes = (f".{out.name}.partial-", f".{out.name}.replaced-")
    for path in out.parent.iterdir():
        for prefix in prefixes:
            pid = path.name[len(prefix):]
            if path.name.startswith(prefix) and pid.isdigit() and int(pid) != os.getpid() and not _running(int(pid)):
                _remove(path)


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


def _remove(path: Path):
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.is_dir():
        shutil.rmtree(path)
