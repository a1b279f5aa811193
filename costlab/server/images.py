"""A server image on the Docker engine: pulled (with readable progress) or found locally, under
server.pull's policy. Used by the setup step and by a measuring job whose image went away."""
from __future__ import annotations

import sys
from typing import Any, Callable

from docker.errors import DockerException, ImageNotFound
from requests.exceptions import RequestException

from costlab.server.errors import ServerUnavailable

Log = Callable[[str], None]
DOWNLOAD_STEP = 0.25  # report a layer's download at every quarter, not at every chunk


def _stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def split_image(image: str) -> tuple[str, str | None]:
    """(repository, tag) for the pull API: mongo:8.0 -> (mongo, 8.0); no tag -> latest; name@sha256:… ->
    (whole, None)."""
    if "@" in image:
        return image, None
    name, _, tag = image.rpartition(":")
    if name and "/" not in tag:
        return name, tag
    return image, "latest"


class PullProgress:
    """Turns the docker engine's pull events into a few readable lines per layer."""

    def __init__(self, image: str, log: Log):
        self.image = image
        self.log = log
        self.reported: dict[str, float] = {}

    def __call__(self, event: dict) -> None:
        if "error" in event:
            raise ServerUnavailable(f"docker pull {self.image} failed: {event['error']}")
        status, layer = event.get("status", ""), event.get("id")
        detail = event.get("progressDetail") or {}
        if status == "Downloading" and layer and detail.get("total"):
            fraction = detail.get("current", 0) / detail["total"]
            last = self.reported.get(layer, -1.0)
            if fraction - last >= DOWNLOAD_STEP:
                self.reported[layer] = fraction
                self.log(f"pull {self.image}: layer {layer} {fraction:.0%} of {detail['total'] / 1e6:.1f} MB")
        elif status in ("Downloading", "Extracting", "Waiting", "Verifying Checksum"):
            return
        elif status:
            self.log(f"pull {self.image}: " + (f"layer {layer} " if layer else "") + status.lower())


def pull_image(engine, image: str, log: Log = _stderr):
    """Pull `image` (showing progress) and return the engine's image object."""
    repo, tag = split_image(image)
    progress = PullProgress(image, log)
    log(f"pull {image}: asking the registry (nothing is downloaded if the local image is current)")
    for event in engine.api.pull(repo, tag=tag, stream=True, decode=True):
        progress(event)
    return engine.images.get(image)


PULL_POLICIES = ("missing", "always", "never")   # server.pull, as Docker Compose's pull_policy


def engine_reason(err: BaseException) -> str:
    """An engine or registry error in one line (APIError's explanation, else the message)."""
    text = str(getattr(err, "explanation", None) or err).strip()
    return (text.splitlines()[0] if text else type(err).__name__)[:300]


def _local_image(engine, image: str):
    """The engine's image of that name, or None."""

    try:
        return engine.images.get(image)
    except ImageNotFound:
        return None


def _how_to_get(image: str) -> str:
    return (
        f"get it onto this engine with `docker pull {image}` where the registry answers, `docker load -i "
        "FILE` "
        f"or `docker build -t {image} .`, or set server.image to an image you have (`docker images`)"
    )


def ensure_image(engine, image: str, policy: str = "missing", log: Log = _stderr) -> tuple[Any, bool]:
    """(the engine's image, whether it came from a pull now) under server.pull `policy`.

    missing: a local image is used as it is, else pulled; always: pulled, and when the registry
    cannot be reached a local image is used with one line saying so; never: a local image or an
    error. Every failure is one ServerUnavailable line naming the image, what was tried and the fix.
    """

    if policy not in PULL_POLICIES:
        raise ServerUnavailable(f"server.pull is {policy!r}; allowed: {', '.join(PULL_POLICIES)}")
    try:
        local = None if policy == "always" else _local_image(engine, image)
        if local is not None:
            return local, False
        if policy == "never":
            raise ServerUnavailable(f"image {image} is not on this Docker engine and server.pull is never: "
                                    + _how_to_get(image) + ", or set server.pull: missing")
        try:
            return pull_image(engine, image, log), True
        except (DockerException, RequestException, ServerUnavailable) as err:
            reason = engine_reason(err)
        local = _local_image(engine, image) if policy == "always" else None
        if local is not None:
            log(f"pull {image} failed ({reason}); using the local image {local.id} (server.pull: always)")
            return local, False
        raise ServerUnavailable(
            f"image {image} is not on this Docker engine and pulling it failed ({reason}): "
            + _how_to_get(image)
        )
    except (DockerException, RequestException) as err:   # the engine itself failed us
        raise ServerUnavailable(f"the Docker engine failed while looking for image {image}: "
                                f"{engine_reason(err)}") from None
