#!/bin/sh
# `make interop-latest`: the interop suite against the newest releases of its counterparts
# (docs/interop.md). Arguments: the test paths. Environment (set by the Makefile):
# NODE_TOOLS (the npm folders), INTEROP_LATEST (where their copies go), PYTHON, UV.
set -eu
root=$(pwd)
latest="$root/$INTEROP_LATEST"
venv="$root/.venv-latest"
say() { printf '\033[1m==> %s\033[0m\n' "$*"; }

say "npm counterparts at @latest (copies in $INTEROP_LATEST/)"
rm -rf "$latest"
mkdir -p "$latest"
for folder in $NODE_TOOLS; do
  copy="$latest/$(basename "$folder")"
  mkdir -p "$copy"
  (cd "$folder" && find . -path ./node_modules -prune -o -type f -print) |
    while read -r file; do mkdir -p "$copy/$(dirname "$file")" && cp "$folder/$file" "$copy/$file"; done
  # Every direct dependency at @latest, except one that another is a peer of (typescript
  # for openapi-typescript): that stays as pinned, as its users have it, and npm says so
  # if the newest release of the other needs a newer one.
  packages=$(cd "$copy" && node -e '
    const p = require("./package.json");
    const lock = require("./package-lock.json").packages;
    const peers = new Set(Object.values(lock).flatMap((e) => Object.keys(e.peerDependencies || {})));
    const names = Object.keys({ ...p.dependencies, ...p.devDependencies }).filter((n) => !peers.has(n));
    console.log(names.map((n) => n + "@latest").join(" "));')
  rm "$copy/package-lock.json"
  # shellcheck disable=SC2086  # one word per package
  (cd "$copy" && npm install --no-audit --no-fund --silent --save-exact $packages &&
    touch node_modules/.installed)
  (cd "$copy" && node -e '
    const p = require("./package.json");
    for (const n of Object.keys(p.dependencies || {}))
      console.log("   " + n + " " + require("./node_modules/" + n + "/package.json").version);')
  echo "   ($folder)"
done

say "Python counterparts, newest, in .venv-latest/"
[ -x "$venv/bin/python" ] || "$PYTHON" -m venv "$venv"
"$UV" pip install --quiet --python "$venv/bin/python" --compile-bytecode -e '.[dev]'
"$UV" pip install --quiet --python "$venv/bin/python" --upgrade \
  mcp mcp-types openapi-python-client ag-ui-protocol
"$venv/bin/python" -c '
import importlib.metadata as m
for name in ("mcp", "mcp-types", "openapi-python-client", "ag-ui-protocol"):
    print("   " + name, m.version(name))'

say "The interop tests"
INTEROP_NODE_ROOT="$latest" PATH="$venv/bin:$PATH" \
  "$venv/bin/python" -m pytest -n "${TEST_WORKERS:-2}" -p no:cacheprovider "$@"
