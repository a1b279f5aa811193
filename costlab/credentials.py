"""Connection strings and their credentials: the one place that redacts, checks and completes a URI.

Standard library only: the rule files import it to keep passwords out of params.

The password is meant to come from the environment, never from the command line or a file
Snakemake records: COSTLAB_MONGODB_PASSWORD is put into the URI's user info at connect time,
or COSTLAB_MONGODB_URI replaces server.uri altogether. Nothing here writes either anywhere.
"""
from __future__ import annotations

import copy
import os
import re
from urllib.parse import parse_qsl, quote, unquote, urlencode, urlsplit, urlunsplit

ENV_URI = "COSTLAB_MONGODB_URI"
ENV_PASSWORD = "COSTLAB_MONGODB_PASSWORD"
SCHEMES = ("mongodb", "mongodb+srv")
SECRET_OPTION_WORDS = ("password", "secret", "token", "key")


def redact_uri(uri: str) -> str:
    """The URI without password (user name kept) and without options whose names look secret."""
    parts = urlsplit(uri)
    netloc = parts.netloc
    if "@" in netloc:
        userinfo, hosts = netloc.rsplit("@", 1)
        user = userinfo.split(":", 1)[0]
        netloc = f"{user}@{hosts}" if user else hosts
    query = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True)
             if not any(word in k.lower() for word in SECRET_OPTION_WORDS)
             and not any(word in v.lower() for word in ("aws_session_token",))]
    return urlunsplit((parts.scheme, netloc, parts.path, urlencode(query, safe=",:"), parts.fragment))


def uri_problem(uri: str) -> str | None:
    """Why `uri` is not a MongoDB connection string (None when it is one), without echoing secrets."""
    if not isinstance(uri, str) or not uri.strip():
        return "is empty"
    scheme, sep, rest = uri.partition("://")
    if not sep or scheme not in SCHEMES:
        return "must start with mongodb:// or mongodb+srv://"
    netloc = rest.split("/", 1)[0].split("?", 1)[0]
    hosts = netloc.rsplit("@", 1)[-1]
    if not hosts or any(not h.strip() for h in hosts.split(",")):
        return "names no host (mongodb://host[:port][,host2...]/)"
    for host in hosts.split(","):
        if host.startswith("["):  # IPv6 literal
            port = host.rsplit("]", 1)[-1].lstrip(":")
        else:
            port = host.rsplit(":", 1)[1] if ":" in host else ""
        if port and not (port.isdigit() and 0 < int(port) < 65536):
            return f"has an invalid port {port!r} (1-65535)"
    if scheme == "mongodb+srv" and ("," in hosts or ":" in hosts.split("]")[-1]):
        return "mongodb+srv:// takes exactly one host name and no port"
    return _options_problem(rest.partition("?")[2])


def _options_problem(query: str) -> str | None:
    """pymongo's own check of the URI's ?options (no DNS, no connection), or None."""
    if not query:
        return None
    from pymongo.uri_parser import split_options  # noqa: PLC0415  heavy: bson, pymongo; the rule files import this module

    try:
        split_options(query, validate=True, warn=False)
    except Exception as err:   # ValueError, ConfigurationError, InvalidURI: pymongo's words for it
        # Its message names the option, not the value (never a secret); first sentence only.
        return f"has an option pymongo refuses: {str(err).split('. ')[0]}"
    return None


def uri_has_password(uri: str | None) -> bool:
    if not uri:
        return False
    netloc = urlsplit(uri).netloc
    return "@" in netloc and ":" in netloc.rsplit("@", 1)[0]


def connection_uri(server_config: dict, environ: dict | None = None) -> str | None:
    """The URI to connect with: COSTLAB_MONGODB_URI, else server.uri; COSTLAB_MONGODB_PASSWORD filled in.

    The password goes into the user info only when the URI names a user and carries no password
    of its own, so a URI in a config file can say who (mongodb://alice@host/) and the
    environment says the secret.
    """
    env = os.environ if environ is None else environ
    uri = env.get(ENV_URI) or server_config.get("uri")
    password = env.get(ENV_PASSWORD)
    if not uri or not password or uri_has_password(uri):
        return uri
    parts = urlsplit(uri)
    if "@" not in parts.netloc:
        raise ValueError(f"{ENV_PASSWORD} is set but the server URI {redact_uri(uri)} names no user; "
                         "write the user into it (mongodb://USER@host/)")
    user, hosts = parts.netloc.rsplit("@", 1)
    netloc = f"{user}:{quote(password, safe='')}@{hosts}"
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))


def public_server_config(server_config: dict) -> dict:
    """The server section as it may be shown or stored (params, logs, hashes): URI redacted."""
    public = copy.deepcopy(dict(server_config))
    if public.get("uri"):
        public["uri"] = redact_uri(public["uri"])
    return public


# up to the last @ of the token: a password that holds a raw @ is hidden whole (over-hiding beats a leak)
_URI_PASSWORD = re.compile(r"(mongodb(?:\+srv)?://[^\s:/@'\"]*:)[^\s'\"]*@")


def redact_uri_passwords(text: str) -> str:
    """`text` with the password of every mongodb:// or mongodb+srv:// URI in it replaced by ***, whatever
    the config: for a command line or a path that quotes one (cleanup's --config used to print it)."""
    return _URI_PASSWORD.sub(lambda m: f"{m.group(1)}***@", text)


def redact_text(text: str, server_config: dict, environ: dict | None = None) -> str:
    """`text` with the configured password(s) replaced by ***: for error messages that quote a driver."""
    env = os.environ if environ is None else environ
    secrets = set()
    for uri in (server_config.get("uri"), env.get(ENV_URI)):
        if uri and uri_has_password(uri):
            secret = urlsplit(uri).netloc.rsplit("@", 1)[0].split(":", 1)[1]
            secrets |= {secret, unquote(secret)}
    if env.get(ENV_PASSWORD):
        secrets |= {env[ENV_PASSWORD], quote(env[ENV_PASSWORD], safe="")}
    for secret in sorted(secrets, key=len, reverse=True):
        if secret:
            text = text.replace(secret, "***")
    return text
