"""An incident's sealed record, exported from the desk and verified with no database: every
seal is checked and every settlement re-settled; a changed byte, a damaged or cut archive, a
head of another desk each fail with a sentence naming the problem, never a traceback."""

import io
import json
import subprocess
import sys
import zipfile

import pytest

from settlements.audit import layout
from settlements.audit.__main__ import main
from settlements.audit.verify import Problem, verify
from settlements.exports.incident_record import write_incident_record
from tests.services.helpers import every_record

pytestmark = pytest.mark.django_db


@pytest.fixture
def archive(users, snapshot_factory, tmp_path):
    records = every_record(users, snapshot_factory)
    path = tmp_path / "record.zip"
    with path.open("wb") as out:
        write_incident_record(records["settlement"].case.incident, out)
    return path


def rewritten(path, name: str, change, *, manifest_too: bool = False):
    """The archive with file ``name``'s bytes passed through ``change``; with ``manifest_too``,
    its SHA-256 in the manifest made to match, as a forger would."""
    with zipfile.ZipFile(path) as old:
        files = {info.filename: old.read(info.filename) for info in old.infolist()}
    files[name] = change(files[name])
    if manifest_too:
        import hashlib

        manifest = json.loads(files[layout.MANIFEST])
        manifest["files"][name] = hashlib.sha256(files[name]).hexdigest()
        files[layout.MANIFEST] = layout.canonical_json(manifest)
    out = path.with_name(f"changed-{name.replace('/', '-')}.zip")
    with zipfile.ZipFile(out, "w") as new:
        for file_name, data in files.items():
            new.writestr(file_name, data)
    return out


def test_the_record_verifies_offline_and_says_what_it_checked(archive, capsys):
    report = verify(str(archive))
    checked = dict(report.checked)
    assert checked["settlements re-settled by the engine, lines equal"] >= 1
    assert checked["versions' seals checked"] > 0
    assert checked["sealed facts checked"] > 0
    assert main(["verify", str(archive)]) == 0
    out = capsys.readouterr().out
    assert "re-settled by the engine" in out
    assert out.rstrip().endswith("Verified.")


def test_it_holds_every_kind_of_record(archive):
    names = zipfile.ZipFile(archive).namelist()
    for kind in ("entrants", "payouts", "confirmations", "lines", "items"):
        assert layout.rows_file(kind) in names
    for model in ("settlement", "case", "compensation", "incident"):
        assert layout.rows_file(f"history:{model}") in names
    assert any(name.startswith("snapshots/") for name in names)


@pytest.mark.parametrize(
    ("name", "old", "new", "named"),
    [
        (layout.rows_file("lines"), b'"cash",', b'"fpp",', "ledger"),
        (layout.rows_file("payouts"), b",0,", b",1,", "payout_rows"),
        (layout.rows_file("entrants"), b",1,", b",2,", "entrant_rows"),
        (layout.rows_file("history:settlement"), b'"checked"', b'"chequed"', "versions"),
        (layout.rows_file("confirmations"), b'"failed"', b'"paid"', "confirmations"),
        (layout.rows_file("items"), b"500", b"501", "items"),
        (layout.EVENTS, b'"reason":"checked"', b'"reason":"chequed"', "hash no longer matches"),
        (layout.RECORDS, b'"totals"', b'"totalz"', "totals|release"),
    ],
)
def test_a_changed_byte_fails_naming_what(archive, name, old, new, named):
    def change(data: bytes) -> bytes:
        assert old in data, (name, old)
        return data.replace(old, new, 1)

    with pytest.raises(Problem, match=f"{name} was changed"):
        verify(str(rewritten(archive, name, change)))
    # A forger who also rewrites the manifest meets the seals.
    with pytest.raises(Problem, match=named):
        verify(str(rewritten(archive, name, change, manifest_too=True)))


def test_a_changed_snapshot_fails_its_seal(archive):
    name = next(n for n in zipfile.ZipFile(archive).namelist() if n.startswith("snapshots/"))
    changed = rewritten(archive, name, lambda data: data + b" ", manifest_too=True)
    with pytest.raises(Problem, match="snapshot no longer matches"):
        verify(str(changed))


def test_the_manifest_itself_cannot_change(archive):
    changed = rewritten(
        archive, layout.MANIFEST, lambda data: data.replace(b'"incident":', b'"incident": ')
    )
    with pytest.raises(Problem, match="manifest.json was changed"):
        verify(str(changed))


@pytest.mark.parametrize("cut", [0.5, 0.9, 0.99])
def test_a_truncated_archive_is_named(archive, cut, capsys):
    data = archive.read_bytes()
    archive.write_bytes(data[: int(len(data) * cut)])
    with pytest.raises(Problem, match="not a readable zip archive|damaged"):
        verify(str(archive))
    assert main(["verify", str(archive)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("NOT VERIFIED:") and "Traceback" not in err


def test_a_damaged_archive_is_named(archive, capsys):
    data = bytearray(archive.read_bytes())
    middle = len(data) // 2
    data[middle : middle + 64] = bytes(64)
    archive.write_bytes(bytes(data))
    assert main(["verify", str(archive)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("NOT VERIFIED:") and "Traceback" not in err
    assert "Verified." not in capsys.readouterr().out


def test_not_a_zip_at_all(tmp_path, capsys):
    path = tmp_path / "notes.zip"
    path.write_text("hello")
    assert main(["verify", str(path)]) == 1
    assert "not a readable zip archive" in capsys.readouterr().err


def test_a_head_of_another_desk_is_named(archive, tmp_path, capsys):
    head = tmp_path / "head.json"
    head.write_text(json.dumps({"events": 3, "head": "ab" * 32, "desk": "cd" * 32}))
    assert main(["verify", str(archive), "--head", str(head)]) == 1
    assert "another desk" in capsys.readouterr().err


def test_a_head_of_this_desk_is_accepted(archive, tmp_path):
    manifest = json.loads(zipfile.ZipFile(archive).read(layout.MANIFEST))
    head = tmp_path / "head.json"
    kept = {"events": manifest["head"]["events"], "head": manifest["head"]["hash"]}
    head.write_text(json.dumps(kept | {"desk": manifest["desk"]}))
    assert main(["verify", str(archive), "--head", str(head)]) == 0


def test_a_garbled_head_file_is_named(archive, tmp_path, capsys):
    head = tmp_path / "head.json"
    head.write_text("{not json")
    assert main(["verify", str(archive), "--head", str(head)]) == 1
    assert "Cannot read the head file" in capsys.readouterr().err


def test_the_verifier_runs_without_django(archive):
    """Run as the auditor would: a process that never imports Django."""
    code = (
        "import sys, runpy; sys.argv = ['x', 'verify', sys.argv[1]];"
        "from settlements.audit.__main__ import main; status = main();"
        "assert not any(m == 'django' or m.startswith('django.') for m in sys.modules), 'django';"
        "sys.exit(status)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(archive)], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert "Verified." in done.stdout


def test_an_archive_with_a_file_not_in_its_manifest_fails(archive):
    buffer = io.BytesIO(archive.read_bytes())
    with zipfile.ZipFile(buffer, "a") as more:
        more.writestr("rows/extra.jsonl", b"{}\n")
    archive.write_bytes(buffer.getvalue())
    with pytest.raises(Problem, match="does not list"):
        verify(str(archive))
