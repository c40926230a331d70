"""BotPsy as a static site: the response headers of every route (headers.py, also what
`botpsy-web serve` sends), the build of an uploadable folder (build.py) and the host
configurations written beside it (host_config.py)."""
