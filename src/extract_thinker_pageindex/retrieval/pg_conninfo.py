"""What a PostgreSQL connection string may show of itself: its host, port, database and user — never a
password, an ``sslpassword``, ``options`` or a fragment of any of them — and the scrubbing of error texts
(libpq's, psycopg's, the server's) that quote a value of the string.

The part that needs care is a URL whose password holds an unencoded ``/`` or ``@``: libpq ends the user
information at the first ``@`` or ``/``, so ``postgresql://u:pa/ss@host/db`` reads as host ``u``, port
``pa`` and database ``ss@host/db``, and ``postgresql://u:p@ss@host/db`` as password ``p`` and host
``ss@host``. What is shown of a URL is therefore read after the *last* ``@``; what libpq read in its place
counts as secret, and so does every piece of what may be the password. Needs the ``[postgres]`` extra.
"""

from __future__ import annotations

import logging
import re
import weakref
from urllib.parse import unquote

import psycopg
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from ..errors import InvalidOptionError

__all__ = ["ConnectionString", "scrub_pool_logs"]

#: The fields a message, ``repr`` or ``retriever.dsn`` may show, in the order they are shown.
SHOWN = ("host", "port", "dbname", "user")
#: Fields whose values are settings chosen from a few words or numbers, not secrets: left in error texts.
#: The value of every other field not shown (password, sslpassword, options, service, sslkey, oauth and
#: scram keys, and any libpq adds later) is scrubbed from them.
_SETTINGS = frozenset(
    {
        "channel_binding",
        "client_encoding",
        "connect_timeout",
        "gssdelegation",
        "gssencmode",
        "gsslib",
        "keepalives",
        "keepalives_count",
        "keepalives_idle",
        "keepalives_interval",
        "load_balance_hosts",
        "max_protocol_version",
        "min_protocol_version",
        "replication",
        "require_auth",
        "ssl_max_protocol_version",
        "ssl_min_protocol_version",
        "sslcertmode",
        "sslcompression",
        "sslmode",
        "sslnegotiation",
        "sslsni",
        "target_session_attrs",
        "tcp_user_timeout",
    }
)
_PREFIXES = ("postgresql://", "postgres://")
#: Where libpq cuts a URL, and where it cuts ``options`` into words: the pieces a fragment may be.
_URL_SEPARATORS = re.compile(r"[/@:?&=,#]+")
_OPTION_SEPARATORS = re.compile(r"[\s=,]+")
_ALNUM = re.compile(r"[^\W_]")
_QUOTED = re.compile(r"\"[^\"]*\"|'[^']*'")
_UNSENDABLE = re.compile(r"[\x00\ud800-\udfff]")
_HIDDEN = "..."


class ConnectionString:
    """A PostgreSQL connection string read once: what may be shown of it, and how to scrub what may not
    from a text.

    Args:
        dsn: A URL (``postgresql://user:password@host:5432/dbname?sslmode=require``) or ``key=value``
            pairs, as libpq reads them.

    Raises:
        InvalidOptionError: libpq cannot read ``dsn``, or it holds a NUL or a lone surrogate (which
            libpq cannot be given); the message repeats nothing of it.
    """

    def __init__(self, dsn: str) -> None:
        if _UNSENDABLE.search(dsn):
            raise _unreadable("it holds a NUL character or a lone surrogate, which libpq cannot take")
        params = _parse(dsn)
        #: Whether libpq reads the URL otherwise than it is shown: its password holds ``/`` or ``@``, so
        #: libpq takes pieces of it for the host, port or database (a connection error says so).
        self.misread = False
        secrets: list[str] = []
        region = ""
        shown: dict[str, str] = {}
        prefix = next((prefix for prefix in _PREFIXES if dsn.startswith(prefix)), None)
        if prefix is None:
            # key=value pairs: libpq reads them exactly (quoted values, escapes); nothing is misplaced.
            shown = {key: params[key] for key in SHOWN if params.get(key)}
        else:
            rest = dsn[len(prefix) :]
            at = rest.rfind("@")
            userinfo = rest[:at] if at >= 0 else ""
            colon = userinfo.find(":")
            if colon >= 0:
                region = userinfo[colon + 1 :]
            if colon >= 0 and "?" not in userinfo and not set(userinfo[:colon]) & set("@/"):
                # user:password@rest — the password may hold '/' and '@': what follows the last '@' is
                # the host, port, database and query, read by libpq without the credentials.
                self.misread = bool(set(region) & set("/@"))
                user = unquote(userinfo[:colon])
                if user:
                    shown["user"] = user
                try:
                    remainder = _parse(prefix + rest[at + 1 :])
                except InvalidOptionError:
                    remainder = {}
                shown.update({key: remainder[key] for key in SHOWN if remainder.get(key)})
                secrets += _secret_values(remainder)
            else:
                # No password before the last '@' by URL syntax, or an '@' that may stand in the query
                # (a value holding it): libpq's own reading, less whatever may be a piece of a password.
                pieces = [piece for piece in _pieces(region) if piece] if region else []
                shown = {
                    key: params[key]
                    for key in SHOWN
                    if params.get(key) and not _overlaps(params[key], pieces)
                }
        secrets += _secret_values(params)
        # What libpq read in a shown field's place but is not shown: a misplaced piece of the password.
        for key in SHOWN:
            value = params.get(key)
            if value and value != shown.get(key):
                secrets += [value, *value.split(",")]
        secrets += _pieces(region)
        secrets += [dsn, dsn.strip()]
        kept = set(shown.values())
        hidden = sorted({secret for secret in secrets if secret.strip() and secret not in kept}, key=len)
        # One pattern, the longest secret first (so a piece never leaves the rest of a longer one), each
        # where it stands whole: not inside a longer run of letters and digits (a scrubbed "pa" must not
        # eat the pa of "password").
        alternatives = "|".join(re.escape(secret) for secret in reversed(hidden))
        self._hidden = (
            re.compile(rf"(?<![^\W_])(?:{alternatives})(?![^\W_])", re.IGNORECASE) if hidden else None
        )
        #: The connection string as messages and ``repr`` show it: host, port, database and user only.
        self.shown = make_conninfo("", **{key: shown[key] for key in SHOWN if key in shown})

    def scrub(self, text: str) -> str:
        """``text`` with every value of the connection string that is not shown replaced by ``...``: for
        the texts of libpq, psycopg and the server, which quote what they could not use."""
        return self._hidden.sub(_HIDDEN, text) if self._hidden is not None else text

    def leaks(self, text: str) -> bool:
        """Whether ``text`` holds anything :meth:`scrub` would remove."""
        return self.scrub(text) != text


def scrub_pool_logs(connection: ConnectionString) -> None:
    """Scrub ``connection``'s secrets from what psycopg_pool logs (its warnings quote libpq's errors, and
    Python prints a warning nobody handles on standard error), for as long as ``connection`` lives."""
    _WATCHED.add(connection)
    logging.getLogger("psycopg.pool").addFilter(_POOL_LOG_SCRUBBER)  # once: a filter is added only once


_WATCHED: weakref.WeakSet[ConnectionString] = weakref.WeakSet()


class _PoolLogScrubber(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        message = cleaned = record.getMessage()
        for connection in list(_WATCHED):
            cleaned = connection.scrub(cleaned)
        if cleaned != message:
            record.msg, record.args = cleaned, ()
        return True


_POOL_LOG_SCRUBBER = _PoolLogScrubber()


def _parse(dsn: str) -> dict[str, str]:
    """libpq's reading of ``dsn`` (``conninfo_to_dict``), its refusal an ``InvalidOptionError``."""
    try:
        return {key: str(value) for key, value in conninfo_to_dict(dsn).items() if value is not None}
    except psycopg.ProgrammingError as exc:
        # libpq quotes the part it could not read, which may be (part of) the password: never repeated.
        text = str(exc).replace(dsn, _HIDDEN) if dsn else str(exc)
        raise _unreadable(_QUOTED.sub('"..."', " ".join(text.split())).rstrip(".")) from None


def _unreadable(problem: str) -> InvalidOptionError:
    return InvalidOptionError(
        f"The PostgreSQL connection string cannot be read: {problem}. Pass a URL such as "
        "'postgresql://user@host:5432/dbname' (a password holding '/', '@', '?' or '%' percent-encoded) "
        "or 'host=... dbname=... user=...'."
    )


def _secret_values(params: dict[str, str]) -> list[str]:
    """The values of the fields neither shown nor settings, with the words of ``options``."""
    values: list[str] = []
    for key, value in params.items():
        if key in SHOWN or key in _SETTINGS or not value:
            continue
        values.append(value)
        if key == "options":
            values += [word for word in _OPTION_SEPARATORS.split(value) if _meaningful(word)]
    return values


def _pieces(region: str) -> list[str]:
    """What may be the password in a URL, as written and percent-decoded, whole and cut where libpq cuts."""
    decoded = unquote(region)
    pieces = [*_URL_SEPARATORS.split(region), *_URL_SEPARATORS.split(decoded)]
    return [region, decoded, *(piece for piece in pieces if _meaningful(piece))]


def _meaningful(piece: str) -> bool:
    """Whether a piece is worth scrubbing on its own: two letters or digits at least (not ``-c``)."""
    return len(_ALNUM.findall(piece)) >= 2


def _overlaps(value: str, pieces: list[str]) -> bool:
    """Whether ``value`` lies inside one of ``pieces`` or holds one (case-insensitively)."""
    folded = value.casefold()
    return any(folded in piece.casefold() or piece.casefold() in folded for piece in pieces)
