"""Docker HEALTHCHECK: exit 0 when this container's /healthz answers 200, 1 otherwise.

Slim images have no curl, so this uses the standard library. Django refuses requests for hosts
outside ALLOWED_HOSTS, so the probe names the first allowed host instead of 127.0.0.1.
"""

import os
import sys
import urllib.request


def probe_host() -> str:
    for host in os.environ.get("ALLOWED_HOSTS", "").split(","):
        host = host.strip().lstrip(".")
        if host and host != "*":
            return host
    return "localhost"


def main() -> int:
    port = os.environ.get("PORT", "8000")
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/healthz", headers={"Host": probe_host()}
    )
    try:
        with urllib.request.urlopen(request, timeout=4) as response:
            return 0 if response.status == 200 else 1
    except OSError as exc:
        print(f"unhealthy: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
