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


AUTH_FAILED_CODES = (18,)   # mongod's AuthenticationFailed (src/mongo/base/error_codes.yml)


def authentication_failed(err: BaseException) -> bool:
    """Whether a driver error is the server refusing the credentials (not a server that is down)."""
    code = getattr(err, "code", None)
    return code in AUTH_FAILED_CODES or "authentication failed" in str(err).lower()


def external_failure(public_uri: str, err: BaseException, timeout_s: float, reason: str) -> str:
    """The one line for an external deployment that cannot be used: refused credentials say so
    (a wrong password used to read "did not answer ping within 5 s"), anything else is unreachable."""
    if authentication_failed(err):
        return (f"costlab: the external server {public_uri} refused the credentials: authentication failed "
                f"({type(err).__name__}: {reason}); check the user in server.uri and the password in "
                "COSTLAB_MONGODB_PASSWORD (or COSTLAB_MONGODB_URI)")
    return (f"costlab: the external server {public_uri} did not answer ping within {timeout_s:g} s "
            f"({type(err).__name__}: {reason}); check server.uri and that the deployment is up")
