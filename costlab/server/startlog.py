"""What a start error shows of mongod's log: the error and fatal lines with their context, then the end.

mongod 4.4+ logs one JSON document per line with a severity `"s"`: F(atal), E(rror), W(arning),
I(nfo), D1-D5 (mongod docs, "Log Messages"). After a fatal start-up error mongod 7/8 writes
dozens of shutdown lines ("Stepping down the ReplicationCoordinator for shutdown", ..., "Now
exiting", "Shutting down" with the exit code: src/mongo/db/mongod_main.cpp, shutdownTask), so the
last lines alone rarely hold the cause (DBPathInUse, Permission denied, a bad option). Lines that
are not JSON come from outside mongod's logger (the image's entrypoint, option parsing, a crash)
and are kept when they look like an error or a warning.
"""
from __future__ import annotations

import json
from pathlib import Path

KEY_SEVERITIES = ("F", "E")
CONTEXT_BEFORE = 3     # lines shown before each error line: what mongod was doing
TAIL_LINES = 20
MAX_KEY_LINES = 40     # a crash loop can log thousands of errors; the first ones name the cause
READ_LIMIT_BYTES = 4 * 1024 * 1024
_PLAIN_TEXT_MARKERS = (
    "error",
    "warning",
    "fatal",
    "illegal instruction",
    "permission denied",
    "segmentation",
)


def _json_line(line: str) -> dict | None:
    text = line.strip()
    if not text.startswith("{"):
        return None
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _is_key_line(line: str) -> bool:
    parsed = _json_line(line)
    if parsed is not None:
        return parsed.get("s") in KEY_SEVERITIES
    lowered = line.lower()
    return any(marker in lowered for marker in _PLAIN_TEXT_MARKERS)


def _detail(attr: dict) -> str | None:
    """The part of a log line's attributes that names the cause."""
    for key in ("error", "reason", "status", "exception"):
        value = attr.get(key)
        if isinstance(value, str) and value:
            return value
        if isinstance(value, dict):
            text = value.get("errmsg") or value.get("reason") or value.get("message")
            if text:
                return f"{value.get('codeName', '')}: {text}".lstrip(": ")
    message = attr.get("message")
    if isinstance(message, dict):   # WiredTiger's structured message (mongod 7+)
        text = message.get("msg")
        if text:
            return f"{text}: {message['error_str']}" if message.get("error_str") else text
    if isinstance(message, str) and message:
        return message
    return None


def cause_line(log_text: str) -> str | None:
    """One line naming the first error or fatal message, e.g. 'DBException in initAndListen, terminating:
    DBPathInUse: ...'."""
    for line in log_text.splitlines():
        parsed = _json_line(line)
        if parsed is None or parsed.get("s") not in KEY_SEVERITIES:
            continue
        message = str(parsed.get("msg", "")).strip()
        attr = parsed.get("attr") if isinstance(parsed.get("attr"), dict) else {}
        detail = _detail(attr)
        return f"{message}: {detail}" if detail else message
    return None


def start_log_excerpt(log_text: str, context: int = CONTEXT_BEFORE, tail: int = TAIL_LINES) -> str:
    """The cause, every error/fatal line (with `context` lines before it), then the last `tail` lines."""
    lines = [line for line in log_text.splitlines() if line.strip()]
    if not lines:
        return "(the log is empty)"
    key_indexes = [i for i, line in enumerate(lines) if _is_key_line(line)][:MAX_KEY_LINES]
    tail_start = max(0, len(lines) - tail)
    shown: list[str] = []
    cause = cause_line(log_text)
    if cause:
        shown.append(f"cause: {cause}")
    wanted: list[int] = []
    for i in key_indexes:
        wanted.extend(range(max(0, i - context), i + 1))
    wanted = sorted(set(wanted) - set(range(tail_start, len(lines))))
    if wanted:
        shown.append(f"error and fatal lines (with up to {context} lines before each):")
        previous = None
        for i in wanted:
            if previous is not None and i != previous + 1:
                shown.append("  ...")
            shown.append(lines[i])
            previous = i
    shown.append(f"last {len(lines) - tail_start} lines:")
    shown.extend(lines[tail_start:])
    return "\n".join(shown)


def read_log(path: Path, limit_bytes: int = READ_LIMIT_BYTES) -> str:
    """A log file's text (its last limit_bytes), or a note that it is missing."""
    try:
        with open(path, "rb") as fh:
            fh.seek(0, 2)
            size = fh.tell()
            fh.seek(max(0, size - limit_bytes))
            data = fh.read()
    except OSError:
        return f"(no log at {path})"
    text = data.decode(errors="replace")
    if size > limit_bytes:
        text = text.split("\n", 1)[-1]   # drop the partial first line
    return text
