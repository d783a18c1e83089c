"""Snapshots sent together (settlements.archive): every file or archive entry is taken or
refused with its reason, and no archive, however it is built, is a server error or is inflated
past the limits."""

import io
import struct
import zipfile
import zlib

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from hypothesis import given, settings
from hypothesis import strategies as st

from settlements import player_ids
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


def test_an_archive_whose_names_zipfile_cannot_read_is_refused_naming_the_name():
    # A name flagged UTF-8 that is not: zipfile cannot even list the archive.
    data = zipped(("badX.json", SNAPSHOT)).replace(b"badX", b"bad\xff")
    data = patched(data, local={6: ("<H", 0x800)}, central={8: ("<H", 0x800)})
    assert read(("x.zip", data)) == [
        ("x.zip", False, "an entry's name is marked as UTF-8 text but is not: bad\\xff.json")
    ]


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


# --- Names that name no file --------------------------------------------------------------------


def raw_zip(*entries: tuple[bytes, bytes, bool]) -> bytes:
    """A stored (uncompressed) archive of (name as bytes, data, flagged UTF-8) entries, built
    by hand: zipfile itself writes neither an empty name nor one that is not UTF-8."""
    body, directory = bytearray(), bytearray()
    for name, data, utf8 in entries:
        flags = 0x800 if utf8 else 0
        crc = zlib.crc32(data)
        offset = len(body)
        fields = (20, flags, 0, 0, 0x21, crc, len(data), len(data), len(name))
        body += struct.pack("<4s5H3I2H", b"PK\x03\x04", *fields, 0) + name + data
        directory += (
            struct.pack("<4s6H3I5H2I", b"PK\x01\x02", 20, *fields, 0, 0, 0, 0, 0, offset) + name
        )
    end = struct.pack(
        "<4s4H2IH", b"PK\x05\x06", 0, 0, len(entries), len(entries), len(directory), len(body), 0
    )
    return bytes(body + directory + end)


@pytest.mark.parametrize(
    ("name", "shown"),
    [
        (b"", '""'),
        (b".", "."),
        (b"..", ".."),
        (b"./", "./"),
        (b"a/", "a/"),  # a folder's name, holding data
        (b"a\\", "a\\"),
        (b"/", "/"),
        (b"\\", "\\"),
        (b"//", "//"),
        (b"./.", "./."),
        (b"a/..", "a/.."),
        (b"a/./", "a/./"),
    ],
)
@pytest.mark.parametrize("utf8", [False, True])
def test_an_entry_whose_name_names_no_file_is_refused_alone_and_written_out(name, shown, utf8):
    found = read(("x.zip", raw_zip((name, SNAPSHOT, utf8), (b"ok.json", SNAPSHOT, False))))
    assert found == [(shown, False, "its name holds no file name"), ("ok.json", True, "")]


@pytest.mark.parametrize(
    ("name", "shown", "problem"),
    [
        (b"bad\xff.json", "bad\\xff.json", "its name is not UTF-8 text"),
        (b"\xc3(.json", "\\xc3(.json", "its name is not UTF-8 text"),
        (b"\x00", "\\u0000", "its name must not contain the control character U+0000"),
        (b"a\x00.json", "a\\u0000.json", "its name must not contain the control character U+0000"),
        (b"\x1b[2J.json", "\\u001b[2J.json", "its name must not contain the control character"),
    ],
)
def test_a_name_of_control_characters_or_bytes_that_are_not_utf8_is_written_out(
    name, shown, problem
):
    [(found, taken, why)] = read(("x.zip", raw_zip((name, SNAPSHOT, False))))
    assert (found, taken) == (shown, False) and why.startswith(problem)


def test_a_utf8_name_stored_without_its_flag_is_read_as_utf8():
    assert read(("x.zip", raw_zip(("café.json".encode(), SNAPSHOT, False)))) == [
        ("café.json", True, "")
    ]


def test_a_folder_entry_is_passed_over():
    archive = raw_zip((b"snaps/", b"", False), (b"snaps/a.json", SNAPSHOT, False))
    assert read(("x.zip", archive)) == [("snaps/a.json", True, "")]


_NAME_BYTES = st.lists(
    st.sampled_from([b".", b"..", b"/", b"\\", b"", b"a", b".json", b"\x00", b"\x01", b"\x7f"])
    | st.binary(max_size=3),
    max_size=6,
).map(b"".join)


@settings(max_examples=300, deadline=None)
@given(entries=st.lists(st.tuples(_NAME_BYTES, st.booleans()), min_size=1, max_size=4))
def test_no_entry_name_is_an_error_and_each_is_answered(entries):
    archive = raw_zip(*((name, SNAPSHOT, utf8) for name, utf8 in entries))
    files = snapshot_files([SimpleUploadedFile("x.zip", archive)])
    readable = all(not utf8 or _is_utf8(name) for name, utf8 in entries)
    if not readable:
        [refused] = files
        assert refused.content is None and "marked as UTF-8" in refused.problem
        return
    assert len(files) == len(entries)
    for (name, _), file in zip(entries, files, strict=True):
        # What the job's page shows: never empty, never a control or invisible character.
        assert file.name and player_ids.id_problem(file.name) is None
        if _names_no_file(name):
            assert file.content is None and file.problem


def _is_utf8(name: bytes) -> bool:
    try:
        name.decode()
    except UnicodeError:
        return False
    return True


def _names_no_file(name: bytes) -> bool:
    parts = [part for part in name.replace(b"\\", b"/").split(b"/") if part not in (b"", b".")]
    return not parts or parts[-1] == b".." or name.endswith((b"/", b"\\"))


def test_the_bounds_count_every_file_of_the_request_not_each_zip(settings):
    """Many zips of the maximum each, or a zip and loose files, in one request: the caps are
    for the request, as they bound what one request may make the server unpack."""
    settings.ARCHIVE_MAX_FILES = 3
    two = zipped(("a.json", SNAPSHOT), ("b.json", SNAPSHOT))
    found = read(("one.zip", two), ("two.zip", two))
    assert found[:2] == [("a.json", True, ""), ("b.json", True, "")]
    assert found[2][:2] == ("two.zip", False)
    assert "at most 3 are taken at once" in found[2][2]
    loose = read(("one.zip", two), ("c.json", SNAPSHOT), ("d.json", SNAPSHOT))
    assert loose[3] == ("d.json", False, "at most 3 files are taken at once")


def test_the_unpacked_bytes_are_bounded_over_the_request(settings):
    settings.ARCHIVE_MAX_BYTES = 2 * len(SNAPSHOT)
    one = zipped(("a.json", SNAPSHOT), ("b.json", SNAPSHOT))
    found = read(("one.zip", one), ("two.zip", zipped(("c.json", SNAPSHOT))), ("d.json", SNAPSHOT))
    assert [taken for _, taken, _ in found] == [True, True, False, False]
    assert found[2][2] == "the archive is too large once unpacked"
    assert found[3][2] == f"the files sent together are larger than {2 * len(SNAPSHOT):,} bytes"
