class ServerUnavailable(RuntimeError):
    """No server can be had with this config; the message says what to install or set."""


class NoServerForTarget(ServerUnavailable):
    """A target asked for needs a MongoDB server and there is none (raised while the workflow is planned).

    The console (costlab.console) shows only this message, not Snakemake's exception around it.
    """


class ServerStartError(RuntimeError):
    """A server was started but did not become ready; the message carries the cause from its log."""


# The one line that says how to get a server (the `make all` note, the report, not_run.json).
NO_SERVER_FIX = ("start a Docker engine, or put mongod on PATH (or set server.mongod), "
                 "or set server.backend: external and server.uri in your config")
NO_SERVER_REASON = "no MongoDB server"
NO_SERVER_MESSAGE = f"costlab: {NO_SERVER_REASON} available: {NO_SERVER_FIX}"
