"""`jubensha serve`: play in the browser (lobby, human seats, spectators, reviews of runs)."""

from __future__ import annotations

import ipaddress
import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from jubensha.llm.registry import ModelOptions, ModelSpecError, validate_model_spec
from jubensha.signing import KeyFileError
from jubensha.terminal import Terminal, fail
from jubensha.web.app import Settings, create_app
from jubensha.web.restore import resume_table
from jubensha.web.serverlimits import uvicorn_options
from jubensha.web.tables import MAX_TABLES, TableHost

if TYPE_CHECKING:
    import socket

    import uvicorn

PASSWORD_ENV = "JUBENSHA_HOST_PASSWORD"
GRACE_S = 3
"""How long a stopping server waits for requests still running before it cuts them."""
errors = Terminal(stderr=True)


def serve(
    host: Annotated[str, typer.Option(help="Address to listen on. The default answers only "
                                           "this machine; 0.0.0.0 opens it to your network "
                                           "(set a host password then).")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to listen on.")] = 8000,
    runs: Annotated[Path, typer.Option(help="Where games are written, and which run folders "
                                            "the server lists for review.")] = Path("runs"),
    scripts: Annotated[list[Path] | None, typer.Option(
        "--scripts", help="A folder of scripts to offer besides the bundled ones "
                          "(repeatable).")] = None,
    model: Annotated[list[str] | None, typer.Option(
        "--model", help="A model the lobby may seat (repeatable; default: local and "
                        "scripted). Endpoints and keys come from --base-url and the "
                        "environment, never from the page.")] = None,
    base_url: Annotated[str | None, typer.Option(help="Base URL for openai: models.")] = None,
    embedder: Annotated[str, typer.Option(help="The seats' embedder.")] = "none",
    allow_host: Annotated[list[str] | None, typer.Option(
        "--allow-host", help="A host name the server answers to besides IP addresses, "
                             "localhost and --host, e.g. my-laptop.local (repeatable). "
                             "Requests naming any other host are refused.")] = None,
    max_tables: Annotated[int, typer.Option(
        min=1, help="Tables that may play at once; the lobby refuses more.")] = MAX_TABLES,
    proxy: Annotated[list[str] | None, typer.Option(
        "--proxy", help="The address (or network, 10.0.0.0/8) of a reverse proxy in front "
                        "of the server, whose X-Forwarded-For and X-Forwarded-Proto are "
                        "believed (repeatable). Without one they are ignored.")] = None,
    state: Annotated[Path | None, typer.Option(
        help="Where the server keeps the key its invite links are made with, so that the "
             "links of tables still work after a restart (default: "
             "$XDG_STATE_HOME/jubensha, else ~/.local/state/jubensha).")] = None,
) -> None:
    """Host tables in the browser: a lobby, a page per human seat, a spectator view with
    suspicion charts, and the review of any run folder. The host password, when wanted,
    is read from JUBENSHA_HOST_PASSWORD."""
    import uvicorn

    password = os.environ.get(PASSWORD_ENV) or None
    models = model or ["local", "scripted"]
    try:
        models = [validate_model_spec(spec) for spec in models]
    except ModelSpecError as exc:
        errors.print(f"error: {exc}", markup=False)
        raise typer.Exit(2) from None
    if not _loopback(host) and not password:
        errors.print(f"note: {host} is reachable from other machines and the lobby has no "
                     f"password; set {PASSWORD_ENV} to protect it.", markup=False)
    settings = Settings(runs=runs, script_dirs=list(scripts or []), models=models,
                        password=password, embedder=embedder,
                        allowed_hosts=[host, *(allow_host or [])])
    options = ModelOptions(base_url=base_url) if base_url else ModelOptions()
    try:
        tables = TableHost(runs, options, embedder=embedder, max_tables=max_tables,
                           state=state or default_state(), resumer=resume_table)
    except KeyFileError as exc:
        raise fail(str(exc)) from None
    print(f"jubensha: the lobby is at http://{host}:{port}/", flush=True)
    config = uvicorn.Config(create_app(settings, tables), host=host, port=port,
                            log_level="warning", timeout_graceful_shutdown=GRACE_S,
                            **uvicorn_options(proxy or []))
    web_server(config, tables).run()


def web_server(config: uvicorn.Config, tables: TableHost) -> uvicorn.Server:
    """uvicorn's server, which on SIGTERM or Ctrl-C first ends the pages' event streams:
    otherwise it waits for every browser holding one to go away."""
    import uvicorn

    class WebServer(uvicorn.Server):
        async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
            tables.hang_up()
            await super().shutdown(sockets)

    return WebServer(config)


def default_state() -> Path:
    """The server's state folder: ``$XDG_STATE_HOME/jubensha`` or ``~/.local/state/jubensha``."""
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "jubensha"


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
