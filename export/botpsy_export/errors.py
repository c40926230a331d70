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


class DownloadError(ExportError):
    """A pinned download failed or does not match its pinned hash or size."""


class VerificationFailedError(ExportError):
    """fp32 parity failed: the exported graph does not compute what PyTorch computes."""


class AppendingGraphError(ExportError):
    """A cache output of the graph is not Concat(past, new): no appending graph can be made."""
