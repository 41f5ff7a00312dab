"""Local runtimes asked, not guessed: does the model a local server runs read images?

| runtime    | asked                         | vision when                  | default base URL     |
|------------|-------------------------------|------------------------------|----------------------|
| `ollama`   | `POST /api/show {"model": M}` | `"vision"` in `capabilities` | `$OLLAMA_HOST`, else |
|            |                               |                              | `127.0.0.1:11434`    |
| `llamacpp` | `GET /props`                  | `modalities.vision` is true  | `127.0.0.1:8080`     |

A provider the registry does not list (`provider: custom`, `custom:<name>`, a
`custom_providers` entry) whose base URL is on loopback or a private network (an IP literal,
or `localhost`; names are never resolved) is asked as `local`: llama.cpp's `GET /props`
first (as the production agent does), then Ollama's `POST /api/show`, then an OpenAI-compatible
`GET /v1/models`, whose entry for the model answers when it states input modalities
(`input_modalities`, `modalities`, `architecture.input_modalities`, or LM Studio's `type:
vlm`). The three share one `DEADLINE`; a server that cannot be reached is not asked again.

The base URL is the agent config's for the provider (`providers.<id>.base_url`,
`model.base_url`), without an OpenAI-compatible `/v1`. A question is bounded (`DEADLINE`
for the whole exchange, `MAX_BYTES` of answer) and its answer cached per (runtime, base URL,
model): in the process, and on disk (`runtimes.json` in the facts cache) for a definite
answer, for `TTL` seconds; a runtime that does not answer is `unknown` for `RETRY` seconds
and asked again after that. Every answer says where it came from: `probed ollama /api/show
2026-12-01 at http://127.0.0.1:11434: vision (capabilities: completion, vision)`.

`OLLAMA_HOST` is read as Ollama reads it (envconfig): quotes and blanks trimmed; no scheme
means `http` and port 11434; `http://` and `https://` without a port mean 80 and 443; a bare
host or IP keeps the default port. A bind address (`0.0.0.0`, `::`) is asked on loopback.
"""

from __future__ import annotations

import functools
import ipaddress
import json
import os
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Final
from urllib.parse import urlsplit

from visiongate.kernel._files import read_regular_file

from .._files import replace_file
from ._fetch import FetchError, JsonTooDeep, bounded_request, parse_json

__all__ = [
    "DEADLINE",
    "RUNTIMES",
    "RuntimeAnswer",
    "RuntimeProbe",
    "default_base_url",
    "is_private_url",
    "ollama_host",
    "runtime_root",
]

RUNTIMES: Final = ("ollama", "llamacpp")
"""The runtimes a registry entry may name; `local` (an unlisted provider on a private base
URL) is asked by the resolver alone."""
DEADLINE: Final = 0.75
"""Seconds one question may take, connecting included: the most a decision waits."""
MAX_BYTES: Final = 2 * 1024 * 1024
TTL: Final = 24 * 3600.0
RETRY: Final = 60.0
SCHEMA_VERSION: Final = 1
_CACHE_BYTES: Final = 8 * 1024 * 1024
"""The answers cache is read only as a regular file of at most this."""
_BIND_ADDRESSES: Final = {"0.0.0.0": "127.0.0.1", "::": "::1", "[::]": "[::1]"}


@dataclass(frozen=True)
class RuntimeAnswer:
    """What a local runtime said about one model."""

    runtime: str
    base_url: str
    model: str
    verdict: str
    """`vision`, `no_vision`, or `unknown` (no usable answer)."""
    detail: str
    """What showed it (`capabilities: completion, vision`), or why there is no answer."""
    date: str
    checked: float
    """When it was asked (seconds since the epoch)."""
    asked: str = ""
    """The endpoint that answered (`/props`, `/api/show`, `/v1/models`); blank: the
    runtime's own."""

    @property
    def provenance(self) -> str:
        asked = self.asked or ("/api/show" if self.runtime == "ollama" else "/props")
        if self.verdict == "unknown":
            return f"{self.runtime} at {self.base_url} gave no answer ({self.detail}): unknown"
        return (
            f"probed {self.runtime} {asked} {self.date} at {self.base_url}: "
            f"{self.verdict} ({self.detail})"
        )


def ollama_host(value: str | None) -> str:
    """The base URL Ollama's own client uses for an `OLLAMA_HOST` value (see module docs)."""
    text = (value or "").strip().strip("\"'").strip()
    scheme, found, hostport = text.partition("://")
    default_port = "11434"
    if not found:
        scheme, hostport = "http", text
    elif scheme == "http":
        default_port = "80"
    elif scheme == "https":
        default_port = "443"
    hostport = hostport.split("/", 1)[0].rstrip("/")
    host, port = _split_host_port(hostport, default_port)
    host = _BIND_ADDRESSES.get(host, host)
    if ":" in host and not host.startswith("["):
        host = f"[{host}]"
    return f"{scheme}://{host}:{port}"


def _split_host_port(hostport: str, default_port: str) -> tuple[str, str]:
    if hostport.startswith("["):
        host, _, rest = hostport[1:].partition("]")
        port = rest.removeprefix(":") if rest.startswith(":") else default_port
    elif hostport.count(":") == 1:
        host, port = hostport.split(":")
    else:
        host, port = hostport, default_port  # a bare host, or a bare IPv6 address
    if not port.isdigit() or not 0 <= int(port) <= 65535:
        port = default_port
    return host or "127.0.0.1", port


def default_base_url(runtime: str) -> str:
    if runtime == "ollama":
        return ollama_host(os.environ.get("OLLAMA_HOST"))
    return "http://127.0.0.1:8080"


def runtime_root(base_url: str) -> str:
    """A configured base URL as the runtime's root: no `/v1`, no trailing slash."""
    url = base_url.strip().rstrip("/")
    if "://" not in url:
        url = f"http://{url}"
    parts = urlsplit(url)
    path = parts.path.rstrip("/")
    path = path.removesuffix("/v1")
    host = parts.netloc
    name, _, port = host.rpartition(":") if host.count(":") == 1 else (host, "", "")
    name = _BIND_ADDRESSES.get(name, name)
    return f"{parts.scheme}://{name}{':' + port if port else ''}{path}"


def is_private_url(base_url: str) -> bool:
    """Whether a base URL names this machine or a private network: a loopback, private or
    link-local IP literal, or `localhost` (a name is never looked up: no DNS on a decision)."""
    host = urlsplit(base_url if "://" in base_url else f"http://{base_url}").hostname or ""
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return address.is_loopback or address.is_private or address.is_link_local


class RuntimeProbe:
    """Asks local runtimes, with a cache in the process and on disk (None: process only)."""

    def __init__(
        self,
        cache_file: Path | None,
        *,
        deadline: float = DEADLINE,
        ttl: float = TTL,
        retry: float = RETRY,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.cache_file = cache_file
        self.deadline = deadline
        self.ttl = ttl
        self.retry = retry
        self.clock = clock
        self._lock = threading.Lock()
        self._answers: dict[tuple[str, str, str], RuntimeAnswer] | None = None

    def ask(self, runtime: str, base_url: str, model: str) -> RuntimeAnswer:
        """The runtime's answer for `model`, from the cache while it is fresh."""
        root = runtime_root(base_url)
        key = (runtime, root, model)
        found = self._cached().get(key)
        if found is not None and self.clock() < found.checked + self._lifetime(found):
            return found
        answer = self._probe(runtime, root, model)
        with self._lock:
            assert self._answers is not None
            self._answers[key] = answer
            if answer.verdict != "unknown":
                self._save()
        return answer

    def expires(self, answer: RuntimeAnswer) -> float:
        """When `answer` stops being fresh (seconds since the epoch)."""
        return answer.checked + self._lifetime(answer)

    def _lifetime(self, answer: RuntimeAnswer) -> float:
        return self.retry if answer.verdict == "unknown" else self.ttl

    # -- asking -------------------------------------------------------------------------------

    def _probe(self, runtime: str, root: str, model: str) -> RuntimeAnswer:
        from datetime import UTC, datetime  # a probe's only (2 ms of a `decide`, issue 37)

        now = self.clock()
        date = datetime.fromtimestamp(now, UTC).strftime("%Y-%m-%d")
        asked = ""
        try:
            if runtime == "ollama":
                verdict, detail = _ollama(root, model, self.deadline)
            elif runtime == "local":
                verdict, detail, asked = _local(root, model, self.deadline)
            else:
                verdict, detail = _llamacpp(root, self.deadline)
        except FetchError as error:
            verdict, detail = "unknown", str(error).removeprefix(f"{root}").strip()
        return RuntimeAnswer(runtime, root, model, verdict, detail, date, now, asked)

    # -- the disk cache -----------------------------------------------------------------------

    def _cached(self) -> dict[tuple[str, str, str], RuntimeAnswer]:
        with self._lock:
            if self._answers is None:
                self._answers = _read(self.cache_file)
            return self._answers

    def _save(self) -> None:
        if self.cache_file is None:
            return
        assert self._answers is not None
        kept = [asdict(a) for a in self._answers.values() if a.verdict != "unknown"]
        document = {"schema_version": SCHEMA_VERSION, "answers": kept}
        try:
            self.cache_file.parent.mkdir(parents=True, exist_ok=True)
            text = json.dumps(document, indent=1, sort_keys=True) + "\n"
            replace_file(self.cache_file, text.encode(), prefix=".runtimes-", sync=False)
        except OSError:
            pass  # a cache that cannot be written only costs a question next time


def _read(path: Path | None) -> dict[tuple[str, str, str], RuntimeAnswer]:
    if path is None:
        return {}
    try:
        document = parse_json(read_regular_file(path, _CACHE_BYTES).decode("utf-8"))
        items = document["answers"] if document.get("schema_version") == SCHEMA_VERSION else []
        answers = [RuntimeAnswer(**item) for item in items]
    except (OSError, ValueError, TypeError, KeyError, AttributeError):  # UnicodeError too
        return {}  # no cache, or not ours: ask again
    return {(a.runtime, a.base_url, a.model): a for a in answers}


def _json(url: str, method: str, deadline: float, body: Any = None) -> tuple[int, Any]:
    answer = bounded_request(method, url, deadline=deadline, max_bytes=MAX_BYTES, json_body=body)
    try:
        return answer.status, parse_json(answer.body)
    except JsonTooDeep as error:
        raise FetchError(f"{url} answered {error}") from None
    except (json.JSONDecodeError, UnicodeDecodeError):
        return answer.status, None


def _ollama(root: str, model: str, deadline: float) -> tuple[str, str]:
    status, document = _json(f"{root}/api/show", "POST", deadline, {"model": model})
    if status == 404:
        return "unknown", f"ollama has no model `{model}`"
    if status != 200 or not isinstance(document, dict):
        return "unknown", f"/api/show answered HTTP {status} without a model description"
    capabilities = document.get("capabilities")
    if not isinstance(capabilities, list) or not all(isinstance(c, str) for c in capabilities):
        return "unknown", "/api/show lists no `capabilities` (an older Ollama?)"
    verdict = "vision" if "vision" in capabilities else "no_vision"
    return verdict, f"capabilities: {', '.join(capabilities) or 'none'}"


def _llamacpp(root: str, deadline: float) -> tuple[str, str]:
    status, document = _json(f"{root}/props", "GET", deadline)
    if status != 200 or not isinstance(document, dict):
        return "unknown", f"/props answered HTTP {status} without server properties"
    modalities = document.get("modalities")
    vision = modalities.get("vision") if isinstance(modalities, dict) else None
    if not isinstance(vision, bool):
        return (
            "unknown",
            "/props names no `modalities.vision` (a llama.cpp server before multimodal support?)",
        )
    model = document.get("model_path") or document.get("model_alias") or "the loaded model"
    verdict = "vision" if vision else "no_vision"
    return verdict, f"modalities.vision: {str(vision).lower()}, serving {Path(str(model)).name}"


def _local(root: str, model: str, deadline: float) -> tuple[str, str, str]:
    """An unknown local server asked in turn as llama.cpp, Ollama and an OpenAI-compatible
    server, within one deadline: (verdict, detail, the endpoint that answered)."""
    started = time.monotonic()
    tried: list[str] = []
    questions: tuple[tuple[str, Callable[[float], tuple[str, str]]], ...] = (
        ("/props", functools.partial(_llamacpp, root)),
        ("/api/show", functools.partial(_ollama, root, model)),
        ("/v1/models", functools.partial(_openai_models, root, model)),
    )
    for asked, question in questions:
        left = deadline - (time.monotonic() - started)
        if left <= 0.05:
            break
        verdict, detail = question(left)  # a server that cannot be reached raises: no more
        if verdict != "unknown":
            return verdict, detail, asked
        tried.append(f"{asked}: {detail}")
    return "unknown", "; ".join(tried) or f"no time left within {deadline:g} s", ""


def _openai_models(root: str, model: str, deadline: float) -> tuple[str, str]:
    status, document = _json(f"{root}/v1/models", "GET", deadline)
    listed = document.get("data") if isinstance(document, dict) else None
    if status != 200 or not isinstance(listed, list):
        return "unknown", f"/v1/models answered HTTP {status} without a model list"
    entry = next(
        (item for item in listed if isinstance(item, dict) and item.get("id") == model), None
    )
    if entry is None:
        return "unknown", f"/v1/models does not list `{model}`"
    inputs = _stated_inputs(entry)
    if inputs is None:
        return "unknown", f"/v1/models states no input modalities for `{model}`"
    verdict = "vision" if "image" in inputs or "vision" in inputs else "no_vision"
    return verdict, f"input modalities: {', '.join(inputs) or 'none'}"


def _stated_inputs(entry: dict[str, Any]) -> list[str] | None:
    """The input modalities a model list entry states, in the shapes servers use."""
    architecture = entry.get("architecture")
    for found in (
        entry.get("input_modalities"),
        entry.get("modalities", {}).get("input")
        if isinstance(entry.get("modalities"), dict)
        else entry.get("modalities"),
        architecture.get("input_modalities") if isinstance(architecture, dict) else None,
    ):
        if isinstance(found, list) and all(isinstance(item, str) for item in found):
            return [item.lower() for item in found]
    kind = entry.get("type")  # LM Studio's /api/v0 and /v1 entries: `llm`, `vlm`, `embeddings`
    if kind in ("vlm", "llm"):
        return ["text", "image"] if kind == "vlm" else ["text"]
    return None
