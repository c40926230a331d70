"""Per-phase progress bars (tqdm on stderr), or silence."""

import contextlib
import sys
import time


class _Silent:
    def update(self, count=1):
        pass


class Progress:
    def __init__(self, enabled: bool = True):
        self.enabled = enabled
        self.timings: dict[str, float] = {}

    @contextlib.contextmanager
    def phase(self, label: str, total: int | None = None):
        """A bar for one phase; its wall time is kept in `timings`."""
        start = time.perf_counter()
        if not self.enabled:
            yield _Silent()
        else:
            from tqdm import tqdm

            bar = tqdm(total=total or 1, desc=f"{label:<22}", file=sys.stderr, leave=True,
                       bar_format="{desc} {bar:30} {n_fmt}/{total_fmt} [{elapsed}]")
            try:
                yield bar
                bar.n = bar.total
                bar.refresh()
            finally:
                bar.close()
        self.timings[label] = round(time.perf_counter() - start, 2)
