"""What a build produced (BuiltSite) and the headers the table gives each built file: below both
the builder (build.py) and the host configurations written from it (host_config.py)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from botpsy_web.content_policy import fetch_frame_policy_for
from botpsy_web.site.headers import IMMUTABLE, NOTHING_ALLOWED, REVALIDATE, response_headers, route_for

# Stands for the confirmed-fetch frame's ?origin= in a written policy (host_config.py fills it in).
QUERY_ORIGIN = "{query-origin}"


@dataclass
class BuiltSite:
    out: Path
    site: Path
    vendor: str                     # the runtime folder's name, e.g. "vendor-3f2a9c1b7d0e"
    files: dict[str, int] = field(default_factory=dict)          # site path -> bytes (models included)
    model_files: dict[str, dict[str, int]] = field(default_factory=dict)   # model name -> {path: bytes}
    model_origins: tuple[str, ...] = ()

    @property
    def app_bytes(self) -> int:
        in_models = {path for files in self.model_files.values() for path in files}
        return sum(size for path, size in self.files.items() if path not in in_models)


# --- the headers of each built file ---------------------------------------------------

def cache_control(site_path: str, vendor: str) -> str:
    """Content-named folders never change; everything else is revalidated on use (a 304 when unchanged)."""
    return IMMUTABLE if site_path.startswith(f"{vendor}/") else REVALIDATE


def file_headers(built: BuiltSite, site_path: str, query: str = "") -> dict[str, str]:
    """The headers the table gives one built file (site_path relative to the site's root). A policy
    that names the request's ?origin= holds QUERY_ORIGIN, which each host fills in its own way."""
    url_path = "/" + site_path
    route = route_for(url_path)
    if route is None:
        policy = NOTHING_ALLOWED
    elif route.query_origin:
        policy = fetch_frame_policy_for(QUERY_ORIGIN)
    else:
        policy = route.policy(query, built.site / site_path, built.model_origins)
    return response_headers(policy, cache_control(site_path, built.vendor))
