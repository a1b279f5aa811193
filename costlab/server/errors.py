class ServerUnavailable(RuntimeError):
    """No server can be had with this config; the message says what to install or set."""


class ServerStartError(RuntimeError):
    """A server was started but did not become ready; the message carries the cause from its log."""


NO_SERVER_MESSAGE = (
    "costlab: no MongoDB server available: start a Docker engine, or put mongod on PATH "
    "(or set server.mongod), or set server.backend: external and server.uri in your config"
)
