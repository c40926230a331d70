"""The headers of a built site in the forms hosts read: `_headers` (Netlify, Cloudflare Pages),
an nginx `server` block, a Caddyfile, and the root service worker for hosts that send none.

All four render the same rules: the headers the table (headers.py) gives each built file,
grouped into one rule per folder whose files all get the same headers, else one per file.
No two rules match one path, so no host has to merge them (Cloudflare Pages joins repeated
headers with commas, which would make two Content-Security-Policies; Netlify keeps the last).

The confirmed-fetch frame's policy names the origin in its request's ?origin=: nginx fills it
in through a `map` on the query (only an origin that passes the check; anything else is a
400), Caddy through its query placeholder behind the same check, the service worker in
script; `_headers` cannot compute anything per request, so there the frame may connect to
any http(s) origin (docs/deploy.md says so).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from botpsy_web.site.built_site import QUERY_ORIGIN, BuiltSite, file_headers
from botpsy_web.site.headers import NOTHING_ALLOWED, SITE_MIME_TYPES, response_headers

GENERATED = "Written by `botpsy-web build-site` from py/botpsy_web/site/headers.py; rebuild rather than edit."
NOT_SERVED = ("_headers",)
# Cloudflare Pages reads at most 100 rules from _headers.
MAX_HEADER_RULES = 100
# The origin check of content_policy.fetch_frame_policy (no IPv6 literal here), for nginx
# (on the raw, URL-encoded query) and Caddy (on the decoded value).
_HOST = r"[a-z0-9](?:[a-z0-9.-]*[a-z0-9])?"
CADDY_ORIGIN_CHECK = rf"^https?://{_HOST}(:[0-9]{{1,5}})?$"


@dataclass(frozen=True)
class Rule:
    path: str                 # "/web/ui/" (folder=True: everything below it) or "/web/sw.js"
    folder: bool
    headers: dict

    @property
    def names_query_origin(self) -> bool:
        return QUERY_ORIGIN in self.headers.get("Content-Security-Policy", "")


def header_rules(built: BuiltSite) -> list[Rule]:
    """One rule per folder whose files all get the same headers, else one per file; "/" is the page."""
    headers = {path: file_headers(built, path) for path in built.files if path not in NOT_SERVED}
    headers[""] = headers["index.html"]
    rules: list[Rule] = []

    def visit(folder: str):
        inside = {path: value for path, value in headers.items() if path.startswith(folder) and path != folder}
        if folder and len({json.dumps(value, sort_keys=True) for value in inside.values()}) == 1:
            rules.append(Rule("/" + folder, True, next(iter(inside.values()))))
            return
        subfolders = sorted({folder + path[len(folder):].split("/")[0] + "/"
                             for path in inside if "/" in path[len(folder):]})
        for path in sorted(p for p in inside if "/" not in p[len(folder):]):
            rules.append(Rule("/" + path, False, inside[path]))
        for subfolder in subfolders:
            visit(subfolder)

    visit("")
    if "" in headers:
        rules.insert(0, Rule("/", False, headers[""]))
    return rules


# --- Netlify / Cloudflare Pages ---------------------------------------------------------

def netlify_headers(rules: list[Rule], base_url: str | None = None) -> str:
    """The rules' paths below the site's folder (base_url), as the host sees them."""
    folder = base_path(base_url).rstrip("/")
    if len(rules) > MAX_HEADER_RULES:
        raise ValueError(f"_headers would need {len(rules)} rules; Cloudflare Pages reads at most {MAX_HEADER_RULES}")
    lines = [f"# {GENERATED}", "# Netlify and Cloudflare Pages read this file at the site's root.", ""]
    for rule in rules:
        lines.append(folder + rule.path + ("*" if rule.folder else ""))
        for name, value in rule.headers.items():
            lines.append(f"  {name}: {value.replace(QUERY_ORIGIN, 'https: http:')}")
        lines.append("")
    return "\n".join(lines)


# --- nginx ------------------------------------------------------------------------------

def base_path(base_url: str | None) -> str:
    """The folder the site is served from: "/" (an origin's root) or e.g. "/botpsy/"."""
    return urlsplit(base_url).path or "/" if base_url else "/"


def _listen(base_url: str | None) -> tuple[str, str]:
    """(listen, server_name) for the site's URL; TLS is the server's own configuration."""
    if not base_url:
        return "80", "_"
    parts = urlsplit(base_url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    listen = f"{port} ssl" if parts.scheme == "https" else str(port)
    return listen, parts.hostname


def _nginx_headers(headers: dict, indent: str) -> list[str]:
    lines = []
    for name, value in headers.items():
        value = value.replace(QUERY_ORIGIN, "$botpsy_fetch_origin")
        lines.append(f'{indent}add_header {name} "{value}" always;')
    return lines


def nginx_server(rules: list[Rule], site: Path, base_url: str | None) -> str:
    """At an origin's root the server's root is the site; in a folder (base_url https://host/botpsy/)
    every location is below the folder and takes its files from the site (alias)."""
    listen, server_name = _listen(base_url)
    folder = base_path(base_url)
    site_root = site.resolve().as_posix()
    encoded = r"%3A%2F%2F"
    lines = [
        f"# BotPsy: {GENERATED}",
        "# A `map` and a `server` block for nginx's http context (e.g. /etc/nginx/conf.d/botpsy.conf).",
        "",
        "# The confirmed-fetch frame's ?origin= (URL-encoded by the page), as an origin, or empty.",
        "map $arg_origin $botpsy_fetch_origin {",
        f'    "~*^(?<botpsy_s1>https?){encoded}(?<botpsy_h1>{_HOST})%3A(?<botpsy_p1>[0-9]{{1,5}})$" '
        '"$botpsy_s1://$botpsy_h1:$botpsy_p1";',
        f'    "~*^(?<botpsy_s2>https?){encoded}(?<botpsy_h2>{_HOST})$" "$botpsy_s2://$botpsy_h2";',
        '    default "";',
        "}",
        "",
        "server {",
        f"    listen {listen};",
        f"    server_name {server_name};",
    ]
    if listen.endswith("ssl"):
        lines.append("    # ssl_certificate /path/to/fullchain.pem; ssl_certificate_key /path/to/privkey.pem;")
    lines += [f"    root {site_root};"] if folder == "/" else []
    lines += [
        "    index index.html;",
        "    # Range requests (model files) and ETag revalidation are nginx's defaults for files.",
        "    types {",
        *sorted(f"        {mime.split(';')[0]} {suffix[1:]};" for suffix, mime in SITE_MIME_TYPES.items()),
        "    }",
        "    default_type application/octet-stream;",
        "",
    ]
    if folder != "/":
        lines += ["    # The rest of this server is not BotPsy's: serve your own pages here, or copy BotPsy's",
                  "    # locations below into your server block.",
                  "    location / {", *_nginx_headers(response_headers(NOTHING_ALLOWED), "        "),
                  "        return 404;", "    }",
                  f"    location = {folder.rstrip('/')} {{ return 301 {folder}; }}",
                  f"    location ^~ {folder} {{", f"        alias {site_root}/;"]
    else:
        lines.append("    location / {")
    lines += [*_nginx_headers(response_headers(NOTHING_ALLOWED), "        "), "    }"]
    for rule in rules:
        if rule.path == "/":
            continue   # nginx answers / from /index.html (index), whose rule applies
        path = folder.rstrip("/") + rule.path
        match = f"^~ {path}" if rule.folder else f"= {path}"
        lines.append(f"    location {match} {{")
        if folder != "/":
            lines.append(f"        alias {site_root}{rule.path};")
        if rule.names_query_origin:
            lines.append('        if ($botpsy_fetch_origin = "") { return 400; }')
        lines += _nginx_headers(rule.headers, "        ")
        lines.append("    }")
    lines += ["}", ""]
    return "\n".join(lines)


# --- Caddy ------------------------------------------------------------------------------

def caddyfile(rules: list[Rule], site: Path, base_url: str | None) -> str:
    """In a folder (base_url https://host/botpsy/) the rules sit in a handle_path block, which takes
    the folder off the path: they read as at an origin's root."""
    folder = base_path(base_url)
    address = base_url[:len(base_url) - len(folder)] if base_url else ":80"
    query_origin = "{http.request.uri.query.origin}"
    lines = [f"\troot * {site.resolve().as_posix()}",
             "\t# Range requests (model files) and ETags are the file server's defaults."]
    for index, rule in enumerate(rules):
        matcher = f"@rule{index}"
        path = rule.path + ("*" if rule.folder else "")
        if rule.names_query_origin:
            check = f'expression `{query_origin}.matches("{CADDY_ORIGIN_CHECK}")`'
            lines += [f"\t{matcher} {{", f"\t\tpath {path}", f"\t\t{check}", "\t}",
                      f"\t@rule{index}_refused {{", f"\t\tpath {path}", f"\t\tnot {check}", "\t}",
                      f"\trespond @rule{index}_refused 400"]
        else:
            lines.append(f"\t{matcher} path {path}")
        lines.append(f"\theader {matcher} {{")
        for name, value in rule.headers.items():
            lines.append(f'\t\t{name} "{value.replace(QUERY_ORIGIN, query_origin)}"')
        lines.append("\t}")
    for suffix, mime in sorted(SITE_MIME_TYPES.items()):
        name = "type_" + suffix[1:].replace("_", "")
        lines += [f"\t@{name} path *{suffix}", f'\theader @{name} Content-Type "{mime}"']
    lines.append("\tfile_server")
    if folder != "/":
        lines = [f"\tredir {folder.rstrip('/')} {folder}", f"\thandle_path {folder}* {{",
                 *("\t" + line for line in lines), "\t}",
                 "\t# The rest of this site is not BotPsy's: serve your own pages here.",
                 "\thandle {", *(f'\t\theader {name} "{value}"' for name, value in response_headers(NOTHING_ALLOWED).items()),
                 '\t\trespond "Not found" 404', "\t}"]
    return "\n".join([f"# BotPsy: {GENERATED}", f"{address} {{", *lines, "}", ""])


# --- hosts that send no headers: the root service worker --------------------------------

def service_worker_with_headers(rules: list[Rule]) -> str:
    """/sw.js (registered by web/ui/offline.js where web/sw.js cannot be): names every route's headers, then runs web/sw.js, which adds them to responses
    that arrive without them (a host that sends none: GitHub Pages, a plain bucket)."""
    table = {
        "placeholder": QUERY_ORIGIN,
        "nothingAllowed": response_headers(NOTHING_ALLOWED),
        "rules": [[rule.path, rule.folder, rule.headers] for rule in rules],
    }
    return "\n".join([
        f"// BotPsy's service worker for hosts that send no headers. {GENERATED}",
        "// Registered at the site's root (an origin's, or the site's folder), which such a host allows",
        "// without `Service-Worker-Allowed`; rule paths are below that root.",
        f"self.BOTPSY_SITE_HEADERS = {json.dumps(table, indent=1)};",
        'importScripts("web/sw.js");',
        "",
    ])

