"""The name of a client config entry for `visiongate proxy --print-config`: the server's
package, module or script, found the way its launcher reads its own command line.

`npx -y @scope/pkg@1.2 --flag` names `pkg`, `uvx mcp-server-x==1.0` `mcp-server-x`,
`python -m pkg.mod` `pkg-mod`, `python server.py --port 3` `server`,
`node /srv/weather/build/index.js` `weather`, `docker run -i --rm -e KEY ghcr.io/o/srv:1`
`srv`; a program run directly names itself. Names keep to letters, digits, `-` and `_`:
Codex refuses any other character in a server name, and a dot would split its TOML table.
Only the standard library is imported.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final
from urllib.parse import urlparse

__all__ = ["server_name"]


@dataclass(frozen=True)
class _Launcher:
    """How a program that starts another reads its command line."""

    subcommands: tuple[str, ...] = ()
    """Words between the program and the target (`dlx`, `run`, `tool run`); each optional."""
    takes_value: tuple[str, ...] = ()
    """Flags whose value is the next word (`--from X`, `--package X`): X is not the target,
    the command after it is (the executable the package installs names the server best)."""
    module_flag: str = ""
    """The flag whose value is the module to run (`python -m pkg.mod`)."""


_NPM: Final = _Launcher(
    takes_value=("-p", "--package", "-c", "--call", "--cache", "--registry", "-w")
)
_UV: Final = ("--from", "--with", "--with-editable", "--with-requirements", "--python", "-p",
              "--index", "--index-url", "--extra-index-url", "--directory", "--project",
              "--env-file")  # fmt: skip
_CONTAINER: Final = _Launcher(
    subcommands=("run",),
    takes_value=("-e", "--env", "--env-file", "-v", "--volume", "--mount", "--name", "-p",
                 "--publish", "--network", "--net", "-w", "--workdir", "-u", "--user",
                 "--entrypoint", "--platform", "-l", "--label", "--add-host", "-m", "--memory",
                 "--cpus", "--pull", "--restart", "--hostname", "--cap-add", "--cap-drop",
                 "--security-opt", "--device", "--runtime", "--ulimit", "--tmpfs"),
)  # fmt: skip
_PYTHON: Final = _Launcher(
    takes_value=("-X", "-W", "-c", "--check-hash-based-pycs"), module_flag="-m"
)
_NODE: Final = _Launcher(
    takes_value=("-r", "--require", "--import", "--loader", "--experimental-loader", "-e",
                 "--eval", "--env-file", "--conditions", "-C", "--inspect-port"),
)  # fmt: skip
_LAUNCHERS: Final[Mapping[str, _Launcher]] = {
    "npx": _NPM,
    "bunx": _NPM,
    "pnpx": _NPM,
    "npm": _Launcher(("exec",), _NPM.takes_value),
    "pnpm": _Launcher(("dlx", "exec"), _NPM.takes_value),
    "yarn": _Launcher(("dlx", "exec"), _NPM.takes_value),
    "bun": _Launcher(("run", "x"), _NODE.takes_value + _NPM.takes_value),
    "uvx": _Launcher(takes_value=_UV),
    "uv": _Launcher(("run", "tool"), _UV),
    "pipx": _Launcher(("run",), ("--spec", "--python", "--index-url", "--pip-args")),
    "docker": _CONTAINER,
    "podman": _CONTAINER,
    "deno": _Launcher(("run",), ("--config", "-c", "--import-map", "--env-file", "--lock")),
    "node": _NODE,
    "nodejs": _NODE,
    "tsx": _NODE,
    "ts-node": _NODE,
    "ruby": _Launcher(takes_value=("-r", "-I", "-e")),
    "php": _Launcher(takes_value=("-c", "-d", "-r")),
    "perl": _Launcher(takes_value=("-I", "-M", "-e")),
    "bash": _Launcher(takes_value=("-c", "-o")),
    "sh": _Launcher(takes_value=("-c", "-o")),
}
_PYTHONS: Final = re.compile(r"^(python|pypy)(\d+(\.\d+)?)?[tw]?$")
_PROGRAM_SUFFIXES: Final = (".exe", ".cmd", ".bat")
_SCRIPT_SUFFIXES: Final = (".py", ".pyz", ".js", ".mjs", ".cjs", ".ts", ".mts", ".cts", ".rb",
                           ".php", ".pl", ".sh", ".git")  # fmt: skip
_GENERIC_STEMS: Final = frozenset({"index", "main", "__main__", "cli", "run", "start", "app"})
"""Script names that say nothing: the directory they sit in names the server."""
_BUILD_DIRS: Final = frozenset({"build", "dist", "out", "lib", "src", "bin", "target", "."})
_NAME_CHARS: Final = re.compile(r"[^A-Za-z0-9_-]+")


def server_name(command: Sequence[str], url: str | None) -> str:
    """A short name for the config entry: the server package or script, or the URL's host."""
    if url is not None:
        base = urlparse(url).hostname or ""
    else:
        base = _bare(_target(command)) if command else ""
    cleaned = _NAME_CHARS.sub("-", base).strip("-")
    return cleaned or "server"


def _program(word: str) -> str:
    name = os.path.basename(word.rstrip("/\\")).lower()
    for suffix in _PROGRAM_SUFFIXES:
        name = name.removesuffix(suffix)
    return name


def _launcher(program: str) -> _Launcher | None:
    return _PYTHON if _PYTHONS.match(program) else _LAUNCHERS.get(program)


def _target(command: Sequence[str]) -> str:
    """The word of `command` that names the server: what its launcher starts, or itself."""
    launcher = _launcher(_program(command[0]))
    if launcher is None:
        return command[0]
    words = list(command[1:])
    while words:
        word = words.pop(0)
        flag, equals, inline = word.partition("=")
        if launcher.module_flag and flag == launcher.module_flag:
            return inline if equals else (words.pop(0) if words else "")
        if flag in launcher.takes_value:
            if not equals and words:
                words.pop(0)
        elif not word.startswith("-") and word not in launcher.subcommands:
            return word
        # else a switch (`-y`, `--rm`, `--`), a value glued to its flag (`-Xdev`), `run`
    return command[0]


def _bare(word: str) -> str:
    """The name in a package spec, module, image, URL or script path: no scope, version, tag
    or suffix (`@scope/pkg@1.2` -> `pkg`, `pkg==1.0` -> `pkg`, `ghcr.io/o/srv:1` -> `srv`)."""
    word = re.split(r"[=<>!~;\[]", word, maxsplit=1)[0]  # pip: `pkg==1.0`, `pkg[extra]`
    word = re.sub(r"^(npm|jsr):", "", word.split("@sha256:", 1)[0])  # deno specs, digests
    if "://" in word or word.startswith("git+"):
        word = urlparse(word.removeprefix("git+")).path
    parts = [part for part in re.split(r"[/\\]", word) if part]
    if not parts:
        return ""
    last = re.sub(r"(?<=.)@[^@]*$", "", parts[-1]).split(":", 1)[0]  # `pkg@1.2`, `image:tag`
    for suffix in _SCRIPT_SUFFIXES:
        last = last.removesuffix(suffix)
    if last in _GENERIC_STEMS:
        return next((part for part in reversed(parts[:-1]) if part not in _BUILD_DIRS), last)
    return last
