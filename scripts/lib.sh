# Shared by scripts/run, scripts/test and .ci/run; source it, don't run it.
# Finds or installs uv, then builds .venv exactly as uv.lock says; installs Debian packages
# (PostgreSQL for CI, Chromium for the end-to-end tests) when they are missing.

# Sets UV to a command (an array) that runs uv.
ensure_uv() {
    if command -v uv >/dev/null 2>&1; then
        UV=(uv)
        return
    fi

    local python=""
    for candidate in python3.13 python3 python; do
        if command -v "$candidate" >/dev/null 2>&1 && "$candidate" -c 'import sys' 2>/dev/null; then
            python=$candidate
            break
        fi
    done
    if [ -z "$python" ]; then
        echo "error: no Python found; install Python 3.13 first (https://www.python.org/downloads/)" >&2
        return 1
    fi

    # uv may already be installed as a package of that interpreter (pip install --user uv).
    if "$python" -m uv --version >/dev/null 2>&1; then
        UV=("$python" -m uv)
        return
    fi

    local tool_dir="${XDG_DATA_HOME:-$HOME/.local/share}/crashdesk/uv"
    if [ -x "$tool_dir/bin/uv" ]; then
        UV=("$tool_dir/bin/uv")
        return
    fi

    echo "== Installing uv (the Python package manager this project uses) ==" >&2
    # Quietly: on a distribution Python this attempt is expected to fail, and the fallback follows.
    if "$python" -m pip install --user --quiet uv >/dev/null 2>&1 \
        && "$python" -m uv --version >/dev/null 2>&1; then
        UV=("$python" -m uv)
        return
    fi
    # Distribution Pythons refuse user installs (PEP 668); a private virtualenv always works.
    "$python" -m venv "$tool_dir" >&2
    "$tool_dir/bin/python" -m pip install --quiet uv >&2
    UV=("$tool_dir/bin/uv")
}

sync_env() {
    echo "== Installing dependencies from uv.lock into .venv ==" >&2
    # Byte-compiled up front: uv skips it by default and PYTHONDONTWRITEBYTECODE (set in many
    # containers) stops Python caching it, so every command re-parsed Django on each start
    # (`manage.py settle` on 300,000 entrants: 1.90 s -> 1.14 s).
    "${UV[@]}" sync --locked --compile-bytecode "$@" >&2
}

# Installs Debian packages, through sudo when not root (env passes DEBIAN_FRONTEND through sudo's
# environment reset); apt's index is refreshed once per run.
apt_install() {
    local sudo=()
    if [ "$(id -u)" -ne 0 ]; then sudo=(sudo); fi
    if [ -z "${_apt_updated:-}" ]; then
        "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq
        _apt_updated=1
    fi
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@"
}

# The end-to-end tests drive /usr/bin/chromium (or $CHROMIUM_PATH); without it they error.
ensure_chromium() {
    local chromium=${CHROMIUM_PATH:-/usr/bin/chromium}
    if [ ! -x "$chromium" ]; then
        if [ -n "${CHROMIUM_PATH:-}" ] || ! command -v apt-get >/dev/null 2>&1; then
            echo "warning: no Chromium at $chromium; the end-to-end tests will fail" >&2
            return
        fi
        echo "== Installing Chromium (Debian's package) for the end-to-end tests ==" >&2
        apt_install chromium >&2
    fi
    # The version goes with the set-up notes; the wrapper script's own chatter is dropped.
    "$chromium" --version >&2 2>/dev/null
}
