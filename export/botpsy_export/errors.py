"""Errors an export user can act on: each prints as one line that says what to do."""


class ExportError(Exception):
    """Base class: the CLI prints `error: <message>` and exits with status 2."""


class UnknownArchitectureError(ExportError):
    pass


class WeightsError(ExportError):
    """Weights missing, or only in a pickle-based format we refuse to load."""


class HubUnreachableError(ExportError):
    pass


class OutOfDiskError(ExportError):
    pass


class OutFolderError(ExportError):
    """--out names something an export may not replace (a file, a folder that is no export)."""


class DownloadError(ExportError):
    """A pinned download failed or does not match its pinned hash or size."""


class VerificationFailedError(ExportError):
    """A graph does not compute what PyTorch (or its standard graph) computes. `folder` is where
    the failed export was kept for inspection (not --out, which is left as it was)."""

    def __init__(self, message: str, folder=None):
        super().__init__(message)
        self.folder = folder


class AppendingGraphError(ExportError):
    """A cache output of the graph is not Concat(past, new): no appending graph can be made."""
