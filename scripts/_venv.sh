# Shared by scripts/serve and scripts/test: make .venv and install the project with
# the given extras, again only when pyproject.toml changed since the last install.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
PYTHON="${PYTHON:-python3}"
if ! "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
  echo "companion-memory needs Python 3.11 or newer (found: $("$PYTHON" --version 2>&1)); set PYTHON=/path/to/python3.11" >&2
  exit 1
fi
ensure_venv() {
  local extras="$1"
  if [ ! -x .venv/bin/python ]; then
    "$PYTHON" -m venv .venv
  fi
  if ! installed "$extras"; then
    .venv/bin/python -m pip install --quiet --upgrade pip
    .venv/bin/python -m pip install --quiet -e ".[$extras]"
    touch ".venv/.installed-$extras"
  fi
}

# Whether an install since pyproject.toml last changed had all of these extras: the test
# tools' install (local,dev) serves `serve` and the command line (local) as well.
installed() {
  local stamp extra have
  for stamp in .venv/.installed-*; do
    [ -f "$stamp" ] && ! [ pyproject.toml -nt "$stamp" ] || continue
    have=",${stamp#.venv/.installed-},"
    for extra in ${1//,/ }; do
      [[ "$have" == *",$extra,"* ]] || continue 2
    done
    return 0
  done
  return 1
}

# The real-D1 and Pyodide test tiers run on a pinned Node, Miniflare/workerd, wrangler and
# Pyodide (tools/cloudflare/package-lock.json), installed into the work tree and again only when
# the lockfile changed. Needs npm (any version) to bootstrap; nothing global is changed.
ensure_cloudflare_tools() {
  local dir=tools/cloudflare stamp=tools/cloudflare/node_modules/.installed
  if [ ! -f "$stamp" ] || [ "$dir/package-lock.json" -nt "$stamp" ]; then
    if ! command -v npm >/dev/null; then
      echo "npm is needed to install the pinned Cloudflare toolchain (apt-get install npm)" >&2
      exit 1
    fi
    npm ci --prefix "$dir" --no-audit --no-fund --loglevel=error
    touch "$stamp"
  fi
}
