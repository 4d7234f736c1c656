"""Build the real programs of the e2e tier from their Go modules, once per version.

Each folder of e2e/tools/ is a Go module of kubetrain's own: its go.mod pins one upstream
program (or a few built from the same module graph) and its go.sum holds their checksums, so
the Go module proxy serves exactly what is recorded. e2e/tools.toml says which packages each
module builds into which binaries, with which build environment and linker flags.

The binaries are cached outside the clone, under $KUBETRAIN_E2E_CACHE (default
~/.cache/kubetrain-e2e), in a folder named after the tool, its version and a hash of
everything that decides the build (go.mod, go.sum, the module's own Go files, its section of
tools.toml and `go version`): a second run, or CI on the same machine, reuses them; any change
of a pin builds again. A folder appears only once complete (built in a temporary folder, then
renamed), and concurrent builds of one tool wait for each other on a lock.

    python3 e2e/build.py            build what is missing, print where each tool is
    python3 e2e/build.py --list     print the folders only (no build)
    python3 e2e/build.py kube ...   only these tools

Standard library only: it runs before any virtual environment exists.
"""

from __future__ import annotations

import argparse
import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
import tomllib
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
TOOLS = HERE / "tools"
SPEC = HERE / "tools.toml"


def cache_root() -> Path:
    env = os.environ.get("KUBETRAIN_E2E_CACHE")
    if env:
        return Path(env).expanduser().resolve()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "kubetrain-e2e"


@dataclass(frozen=True)
class Tool:
    name: str
    version: str
    binaries: dict[str, str]  # binary name -> Go package
    env: dict[str, str]
    ldflags: str
    copy: dict[str, str]  # file or folder beside the binaries -> "module//path in the module"

    @property
    def module_dir(self) -> Path:
        return TOOLS / self.name


def load_tools() -> dict[str, Tool]:
    data = tomllib.loads(SPEC.read_text())
    tools = {}
    for name, row in data.items():
        tools[name] = Tool(
            name=name,
            version=row["version"],
            binaries=dict(row["binaries"]),
            env=dict(row.get("env", {})),
            ldflags=row.get("ldflags", ""),
            copy=dict(row.get("copy", {})),
        )
    return tools


_GO_VERSION: str | None = None


def go_version(env: dict[str, str]) -> str:
    global _GO_VERSION
    if _GO_VERSION is None or env.get("GOTOOLCHAIN"):
        out = subprocess.run(
            ["go", "version"], capture_output=True, text=True, check=True, env=go_env(env)
        ).stdout.strip()
        if env.get("GOTOOLCHAIN"):
            return out
        _GO_VERSION = out
    return _GO_VERSION


def go_env(extra: dict[str, str]) -> dict[str, str]:
    env = dict(os.environ)
    env.setdefault("GOFLAGS", "")
    env["GOFLAGS"] = (env["GOFLAGS"] + " -mod=readonly -trimpath -buildvcs=false").strip()
    env.update(extra)
    return env


def key(tool: Tool) -> str:
    h = hashlib.sha256()
    for path in sorted(tool.module_dir.rglob("*")):
        if path.is_file() and (path.name in ("go.mod", "go.sum") or path.suffix == ".go"):
            h.update(str(path.relative_to(tool.module_dir)).encode() + b"\0")
            h.update(path.read_bytes() + b"\0")
    spec = {k: v for k, v in vars(tool).items() if k != "name"}
    h.update(json.dumps(spec, sort_keys=True).encode())
    h.update(go_version(tool.env).encode())
    return h.hexdigest()[:12]


def tool_dir(tool: Tool) -> Path:
    return cache_root() / "bin" / f"{tool.name}-{tool.version}-{key(tool)}"


def module_dir_of(tool: Tool, module: str) -> Path:
    """Where the Go command unpacked `module` (as this tool's module graph requires it)."""
    out = subprocess.run(
        ["go", "list", "-m", "-json", module],
        cwd=tool.module_dir,
        capture_output=True,
        text=True,
        check=True,
        env=go_env(tool.env),
    ).stdout
    info = json.loads(out)
    if "Replace" in info:
        info = info["Replace"]
    if not info.get("Dir"):
        subprocess.run(
            ["go", "mod", "download", module],
            cwd=tool.module_dir,
            check=True,
            env=go_env(tool.env),
        )
        return module_dir_of(tool, module)
    return Path(info["Dir"])


def build(tool: Tool, log=sys.stderr) -> tuple[Path, float]:
    """The tool's folder, built if missing; and the seconds building took (0 when cached)."""
    target = tool_dir(tool)
    if target.is_dir():
        return target, 0.0
    target.parent.mkdir(parents=True, exist_ok=True)
    lock_path = target.parent / f".{tool.name}.lock"
    with open(lock_path, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if target.is_dir():
            return target, 0.0
        started = time.monotonic()
        tmp = target.parent / f".{target.name}.tmp-{os.getpid()}"
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir()
        env = go_env(tool.env)
        print(f"e2e build: {tool.name} {tool.version} ...", file=log, flush=True)
        for binary, package in sorted(tool.binaries.items()):
            cmd = ["go", "build", "-ldflags", f"-s -w {tool.ldflags}".strip(), "-o"]
            cmd += [str(tmp / binary), package]
            result = subprocess.run(
                cmd, cwd=tool.module_dir, env=env, capture_output=True, text=True
            )
            if result.returncode != 0:
                shutil.rmtree(tmp, ignore_errors=True)
                raise SystemExit(
                    f"e2e build: {tool.name}: go build {package} failed:\n{result.stderr}"
                )
        for name, source in sorted(tool.copy.items()):
            module, _, rel = source.partition("//")
            origin = module_dir_of(tool, module) / rel
            if origin.is_dir():
                shutil.copytree(origin, tmp / name)
            else:
                (tmp / name).parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(origin, tmp / name)
            for path in [tmp / name, *(tmp / name).rglob("*")]:
                path.chmod(0o755 if path.is_dir() else 0o644)
        (tmp / "BUILD.json").write_text(
            json.dumps(
                {
                    "tool": tool.name,
                    "version": tool.version,
                    "go": go_version(tool.env),
                    "seconds": round(time.monotonic() - started, 1),
                },
                indent=2,
            )
            + "\n"
        )
        tmp.rename(target)
        seconds = time.monotonic() - started
        print(f"e2e build: {tool.name} {tool.version} built in {seconds:.0f} s", file=log)
        return target, seconds


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tools", nargs="*", help="tools to build (default: all)")
    parser.add_argument("--list", action="store_true", help="print the folders, build nothing")
    args = parser.parse_args(argv)
    tools = load_tools()
    unknown = [t for t in args.tools if t not in tools]
    if unknown:
        print(f"e2e build: unknown tools: {', '.join(unknown)}", file=sys.stderr)
        return 2
    names = args.tools or sorted(tools)
    total = 0.0
    for name in names:
        tool = tools[name]
        if args.list:
            print(f"{name}\t{tool_dir(tool)}")
            continue
        path, seconds = build(tool)
        total += seconds
        print(f"{name}\t{tool.version}\t{path}\t{'cached' if not seconds else f'{seconds:.0f}s'}")
    if not args.list:
        print(f"e2e build: {total:.0f} s building", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
