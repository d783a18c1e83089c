"""Snapshots sent together (settlements.archive): every file or archive entry is taken or
refused with its reason, and no archive, however it is built, is a server error or is inflated
past the limits."""

import io
import struct
import zipfile

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from settlements.archive import snapshot_files

SNAPSHOT = b'{"tournament": {}}'


def zipped(*entries: tuple[str, bytes], method=zipfile.ZIP_DEFLATED) -> bytes:
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w", method) as writer:
        for name, data in entries:
            writer.writestr(name, data)
    return archive.getvalue()


def patched(data: bytes, *, local: dict[int, tuple[str, int]], central: dict[int, tuple]):
    """The archive with fields of its (single) entry's local and central headers changed:
    {offset: (struct format, value)}."""
    data = bytearray(data)
    directory = data.rfind(b"PK\x01\x02")
    for offset, (form, value) in local.items():
        struct.pack_into(form, data, offset, value)
    for offset, (form, value) in central.items():
        struct.pack_into(form, data, directory + offset, value)
    return bytes(data)


def read(*uploads: tuple[str, bytes]) -> list[tuple[str, bool, str]]:
    files = snapshot_files([SimpleUploadedFile(name, data) for name, data in uploads])
    return [(file.name, file.content is not None, file.problem) for file in files]


def test_an_entry_that_declares_fewer_bytes_than_it_holds_is_refused_not_inflated(settings):
    """A zip bomb that lies about its size: the entry is read no further than it declares,
    and the checksum then tells it apart."""
    settings.SNAPSHOT_MAX_BYTES = 1000
    honest = zipped(("bomb.json", b" " * 5_000_000))
    lying = patched(honest, local={22: ("<I", 10)}, central={24: ("<I", 10)})
    assert read(("bomb.zip", honest)) == [
        ("bomb.json", False, "5,000,000 bytes; the limit is 1,000")
    ]
    assert read(("bomb.zip", lying)) == [
        ("bomb.json", False, "this file of the archive cannot be unpacked")
    ]


def test_the_whole_archive_is_bounded_once_unpacked(settings):
    settings.ARCHIVE_MAX_BYTES = 2 * len(SNAPSHOT)
    found = read(("all.zip", zipped(*((f"{n}.json", SNAPSHOT) for n in range(4)))))
    assert [taken for _, taken, _ in found] == [True, True, False, False]
    assert found[2][2] == "the archive is too large once unpacked"


def test_an_archive_whose_names_zipfile_cannot_read_is_refused():
    # A name flagged UTF-8 that is not: zipfile cannot even list the archive.
    data = zipped(("badX.json", SNAPSHOT)).replace(b"badX", b"bad\xff")
    data = patched(data, local={6: ("<H", 0x800)}, central={8: ("<H", 0x800)})
    assert read(("x.zip", data)) == [("x.zip", False, "not a readable zip archive")]


@pytest.mark.parametrize(
    ("local", "central"),
    [
        ({6: ("<H", 0x1)}, {8: ("<H", 0x1)}),  # encrypted: zipfile needs a password
        ({8: ("<H", 99)}, {10: ("<H", 99)}),  # a compression method zipfile does not know
    ],
    ids=["encrypted", "unknown-method"],
)
def test_an_entry_zipfile_cannot_unpack_is_refused(local, central):
    data = patched(zipped(("e.json", SNAPSHOT)), local=local, central=central)
    assert read(("x.zip", data)) == [
        ("e.json", False, "this file of the archive cannot be unpacked")
    ]


def test_corrupt_compressed_data_is_refused():
    data = bytearray(zipped(("c.json", b'{"tournament": {"id": "x"}}' * 50)))
    start = data.index(b"c.json") + len(b"c.json")
    data[start : start + 20] = b"\xff" * 20
    assert read(("x.zip", bytes(data))) == [
        ("c.json", False, "this file of the archive cannot be unpacked")
    ]


@pytest.mark.parametrize(
    ("name", "shown", "problem"),
    [
        ("../../etc/x.json", "../../etc/x.json", "its name points outside the archive"),
        ("/abs.json", "/abs.json", "its name points outside the archive"),
        ("C:\\x.json", "C:\\x.json", "its name points outside the archive"),
        ("..\\..\\w.json", "..\\..\\w.json", "its name points outside the archive"),
        ("inner.ZIP", "inner.ZIP", "an archive inside the archive is not opened"),
        # Written out, so the job's page cannot be made to show another file's name.
        ("x\x01.json", "x\\u0001.json", "its name must not contain the control character U+0001"),
        ("evil\u202enosj.exe", "evil\\u202enosj.exe", "its name must not contain the invisible"),
    ],
)
def test_an_entry_named_outside_the_archive_or_not_as_it_looks_is_refused(name, shown, problem):
    [(found, taken, why)] = read(("x.zip", zipped((name, SNAPSHOT))))
    assert (found, taken) == (shown, False) and why.startswith(problem)


def test_a_loose_file_whose_name_is_not_what_it_looks_like_is_refused():
    assert read(("a\u200b.json", SNAPSHOT)) == [
        (
            "a\\u200b.json",
            False,
            "its name must not contain the invisible formatting character U+200B",
        )
    ]


def test_empty_files_and_duplicate_names_are_each_answered():
    with pytest.warns(UserWarning, match="Duplicate name"):
        archive = zipped(("e.json", b""), ("d.json", SNAPSHOT), ("d.json", SNAPSHOT))
    found = read(("a.zip", archive), ("z.json", b""))
    assert found == [
        ("e.json", False, "the file is empty"),
        ("d.json", True, ""),
        ("d.json", True, ""),
        ("z.json", False, "the file is empty"),
    ]
