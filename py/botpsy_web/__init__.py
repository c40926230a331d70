"""Host-side commands of botpsy-web: serving the page, running checks in a browser."""

from pathlib import Path

# The repository root: index.html, web/, static/ and node_modules/ live here.
REPO_ROOT = Path(__file__).resolve().parents[2]
