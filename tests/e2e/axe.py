"""axe-core, vendored from the npm registry, run in the end-to-end suite's Chromium.

``tests/e2e/vendor/axe.min.js`` is the file of the pinned release, checked against its
SHA-256 every time it is read, so an edited or half-updated copy fails rather than passes.
To move to another release, change VERSION, run ``.venv/bin/python -m tests.e2e.axe``
(it fetches the package with ``npm pack``, prints the new file's SHA-256 and refuses to write
it until SHA256 says the same), then review and commit the file and its licence.
"""

import hashlib
import subprocess
import sys
import tarfile
import tempfile
from functools import cache
from pathlib import Path

VERSION = "4.14.1"
SHA256 = "29348999450cdf2849a8e70b7912fc2da85a849da39c0d0d5394f51d4a9ed95c"
VENDOR = Path(__file__).parent / "vendor"
SOURCE = VENDOR / "axe.min.js"

# WCAG 2.0 and 2.1, levels A and AA: what the desk is held to.
WCAG_21_AA = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]

# Rules left out, each with its reason (also in docs/accessibility.md). Empty: none is.
LEFT_OUT: dict[str, str] = {}

RUN = """
async ([tags, leftOut]) => {
  const rules = Object.fromEntries(leftOut.map((id) => [id, { enabled: false }]));
  const result = await axe.run(document, {
    runOnly: { type: "tag", values: tags }, rules, resultTypes: ["violations"],
  });
  return result.violations.map((v) => ({
    id: v.id,
    help: v.help,
    nodes: v.nodes.slice(0, 5).map((n) => n.target.join(" ") + ": " + n.failureSummary),
  }));
}
"""


@cache
def source() -> str:
    data = SOURCE.read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    if digest != SHA256:
        raise AssertionError(f"{SOURCE} is not axe-core {VERSION} (sha256 {digest})")
    return data.decode()


def violations(page) -> list[dict]:
    """axe's WCAG 2.1 A and AA violations on the page as it is now."""
    # Evaluated through the DevTools protocol, which the page's CSP does not govern: the
    # strict policy stays on, and what the page itself does is still checked against it.
    if not page.evaluate("typeof window.axe !== 'undefined'"):
        page.evaluate(source())
    return page.evaluate(RUN, [WCAG_21_AA, list(LEFT_OUT)])


def describe(found: list[dict]) -> str:
    return "\n".join(
        f"  {v['id']} ({v['help']}):\n" + "\n".join(f"    {node}" for node in v["nodes"])
        for v in found
    )


def vendor() -> None:
    with tempfile.TemporaryDirectory() as folder:
        subprocess.run(
            ["npm", "pack", f"axe-core@{VERSION}", "--pack-destination", folder],
            check=True,
            stdout=subprocess.DEVNULL,
        )
        with tarfile.open(Path(folder) / f"axe-core-{VERSION}.tgz") as archive:
            script = archive.extractfile("package/axe.min.js").read()
            licence = archive.extractfile("package/LICENSE").read()
    digest = hashlib.sha256(script).hexdigest()
    if digest != SHA256:
        sys.exit(f"axe-core {VERSION}'s axe.min.js has sha256 {digest}; set SHA256 to it first")
    VENDOR.mkdir(exist_ok=True)
    SOURCE.write_bytes(script)
    (VENDOR / "axe-core.LICENSE").write_bytes(licence)
    print(f"wrote {SOURCE} (axe-core {VERSION}, sha256 {digest})")


if __name__ == "__main__":
    vendor()
