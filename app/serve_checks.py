"""What `serve` refuses beyond the config's types (a non-loopback listener without a login, a
password that is not a hash, a database newer than this code), checked by `serve`,
`check-config` and a reload alike, before anything runs."""

from __future__ import annotations

from pathlib import Path

from app.config import Config, ConfigError
from app.storage.opening import url_of


def missing_sqlite_file(url: str) -> Path | None:
    """The file of a SQLite URL that does not exist (None for one that does, or another database)."""
    from sqlalchemy.engine import make_url

    u = make_url(url)
    if u.get_backend_name() != "sqlite" or not u.database or u.database == ":memory:":
        return None
    path = Path(u.database).expanduser()
    return None if path.exists() else path


def _users_exist(url: str) -> bool:
    """Whether the database (if it exists yet) holds a user who can log in."""
    from sqlalchemy import inspect, select

    from app.storage.db import make_engine
    from app.storage.models import web_user

    if missing_sqlite_file(url) is not None:
        return False
    engine = make_engine(url)
    try:
        if not inspect(engine).has_table("web_user"):
            return False
        with engine.connect() as c:
            return c.execute(select(web_user.c.id).limit(1)).first() is not None
    finally:
        engine.dispose()


def check_serve(cfg: Config) -> None:
    """The rules `serve` applies beyond the config's types; ConfigError listing every one broken."""
    from app.credentials import is_loopback

    name = cfg.source or "config"
    problems = []
    try:
        password = cfg.password_hash()
    except OSError as exc:
        password = None
        problems.append(f"{name}: web.password_hash_file: cannot read it ({exc.strerror})")
    if not is_loopback(cfg.web.listen) and not password and not problems and not cfg.web.proxy_user_header \
            and not _users_exist(url_of(cfg)):
        problems.append(f"{name}: web.listen = {cfg.web.listen!r} is not loopback, so a login is required: "
                        "set web.password_hash (make one with `rackpulse hash-password`), web.password_hash_file, "
                        "or $RACKPULSE_PASSWORD_HASH; or add a user (`rackpulse users add NAME --role admin`); "
                        "or log in through a proxy (web.proxy_user_header)")
    if password and not password.startswith("scrypt$"):
        problems.append(f"{name}: web.password_hash is not a hash made by `rackpulse hash-password` "
                        "(value not shown: it is a secret)")
    token = cfg.web.api_token_hash.get_secret_value() if cfg.web.api_token_hash else None
    if token and not token.startswith("sha256$"):
        problems.append(f"{name}: web.api_token_hash is not a hash made by `rackpulse make-token` "
                        "(value not shown: it is a secret)")
    if bool(cfg.web.tls_cert_file) != bool(cfg.web.tls_key_file):
        problems.append(f"{name}: set both web.tls_cert_file and web.tls_key_file, or neither")
    for f in (cfg.web.tls_cert_file, cfg.web.tls_key_file):
        if f and not Path(f).is_file():
            problems.append(f"{name}: {f}: no such file")
    try:
        from app.storage.db import newer_schema

        newer = newer_schema(url_of(cfg))
    except Exception:  # noqa: BLE001 - a database not reachable now is the server's to retry, not a config error
        newer = None
    if newer:
        problems.append(f"{name}: storage.url: {newer}")
    if problems:
        raise ConfigError("\n".join(problems))
