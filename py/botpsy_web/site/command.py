"""`botpsy-web build-site OUT [--models DIR ...] [--base-url URL] [--model-url URL] [--webmcp]`."""

from __future__ import annotations

from pathlib import Path

CLOUDFLARE_PAGES_FILE_LIMIT = 25 * 2 ** 20


def register(subparsers):
    parser = subparsers.add_parser(
        "build-site", help="write a static site (and its host configurations) that any web server can serve",
        description="Writes OUT/site/ (upload this; `_headers` for Netlify and Cloudflare Pages at its root), "
                    "OUT/nginx.conf and OUT/Caddyfile. See docs/deploy.md.")
    parser.add_argument("out", type=Path, metavar="OUT", help="output folder (new, empty, or an earlier build)")
    parser.add_argument("--models", type=Path, nargs="+", default=[], metavar="DIR",
                        help="exported model folders (or folders of them) to include")
    parser.add_argument("--base-url", metavar="URL",
                        help="where the site will be served, the root of an origin (https://botpsy.example.org/): "
                             "the server name in nginx.conf and the Caddyfile, and the widget's script tag")
    parser.add_argument("--model-url", metavar="URL",
                        help="serve the model folders from here instead (a bucket, a CDN): they are written to "
                             "OUT/models/ to upload there, and this origin, and only it, joins connect-src")
    parser.add_argument("--no-prompt-states", dest="prompt_states", action="store_false",
                        help="ship the models without the state of the page's default prompt (computed otherwise, in "
                             "headless Chromium, unless current: `botpsy-web prompt-state`); a first visit then "
                             "prefills it")
    parser.add_argument("--webmcp", action="store_true",
                        help="offer the page's enabled tools to visitors' browser agents (WebMCP) from the start; "
                             "each visitor can still turn it off, and reading or changing their data still asks "
                             "them (docs/webmcp.md)")
    parser.set_defaults(func=run)


def run(args) -> int:
    from botpsy_web.serve import node_modules_missing
    from botpsy_web.site.build import SiteBuildError, SiteOptions, build_site

    if node_modules_missing():
        return 2
    try:
        built = build_site(SiteOptions(out=args.out, models=tuple(args.models), base_url=args.base_url,
                                       model_url=args.model_url, offer_webmcp=args.webmcp,
                                       prompt_states=args.prompt_states))
    except SiteBuildError as error:
        print(f"error: {error}")
        return 2
    mib = 2 ** 20
    print(f"botpsy-web: built {built.site} ({len(built.files)} files): app and runtime {built.app_bytes / mib:.1f} MiB")
    for name, files in built.model_files.items():
        where = "OUT/models (upload to --model-url)" if args.model_url else "site/models"
        print(f"  model {name}: {sum(files.values()) / mib:.1f} MiB in {where}")
    print(f"  upload {built.site}/ (its _headers serves Netlify and Cloudflare Pages);"
          f" nginx: {built.out / 'nginx.conf'}; Caddy: {built.out / 'Caddyfile'}")
    large = sorted(path for path, size in built.files.items() if size > CLOUDFLARE_PAGES_FILE_LIMIT)
    if large:
        print(f"  note: Cloudflare Pages refuses files over 25 MiB: {', '.join(large[:4])}"
              f"{' ...' if len(large) > 4 else ''} (docs/deploy.md says what to do)")
    base = (args.base_url or "https://YOUR-BOTPSY-HOST/").rstrip("/")
    print(f'  widget on any site: <script type="module" src="{base}/web/widget.js"></script>')
    return 0
