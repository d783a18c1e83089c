"""Snapshots sent together: several files, or one zip archive of them, within bounds.

Nothing is ever written to disk, so a name is only a label; still, a name that climbs out of
the archive (``..``, an absolute path) is refused, as is an archive nested in another, and so
is a name that names no file (empty, dots or separators only, ending in a separator, not UTF-8
text): each such entry is answered on its own, its name written out. A folder entry (a name
ending in "/" with nothing in it) is a folder, not a snapshot, and is passed over. A zip
entry is read through a cap, so an archive that lies about its sizes (a zip bomb) stops at
the limit instead of filling the memory.
"""

import zipfile
import zlib
from dataclasses import dataclass
from pathlib import PurePosixPath

from django.conf import settings

from settlements import player_ids

# What zipfile raises for an archive it cannot open (a name flagged UTF-8 that is not) or an
# entry it cannot unpack: sizes or checksum that do not match the data (a lying zip bomb),
# corrupt compressed data, encryption, a compression method it does not know.
_UNREADABLE = (
    zipfile.BadZipFile,
    zlib.error,
    EOFError,
    UnicodeDecodeError,
    NotImplementedError,
    RuntimeError,
    ValueError,
    OSError,
)


# The general-purpose flag saying an entry's name is UTF-8 (APPNOTE 4.4.4, bit 11).
_UTF8_FLAG = 0x800


@dataclass(frozen=True)
class SnapshotFile:
    name: str
    content: bytes | None
    problem: str = ""


class _Budget:
    """What one request may still bring: ARCHIVE_MAX_FILES and ARCHIVE_MAX_BYTES bound all its
    uploads together. Counted per zip, they let one request carry many zips of the maximum
    each."""

    def __init__(self) -> None:
        self.files = settings.ARCHIVE_MAX_FILES
        self.bytes = settings.ARCHIVE_MAX_BYTES


def snapshot_files(uploads) -> list[SnapshotFile]:
    """Each uploaded file, or each entry of an uploaded zip, with the reason it is refused."""
    files: list[SnapshotFile] = []
    budget = _Budget()
    for upload in uploads:
        head = upload.read(4)
        upload.seek(0)
        if head.startswith(b"PK\x03\x04") or upload.name.lower().endswith(".zip"):
            files.extend(_archive_entries(upload, budget))
        elif problem := player_ids.id_problem(upload.name):
            files.append(SnapshotFile(player_ids.escaped(upload.name), None, f"its name {problem}"))
        elif budget.files <= 0:
            files.append(SnapshotFile(upload.name, None, _too_many()))
        elif budget.bytes <= 0:
            files.append(SnapshotFile(upload.name, None, _too_large()))
        else:
            budget.files -= 1
            loaded = _bounded(upload.name, upload.size, upload.read, cap=budget.bytes)
            budget.bytes -= len(loaded.content or b"")
            files.append(loaded)
    return files


def _too_many() -> str:
    return f"at most {settings.ARCHIVE_MAX_FILES:,} files are taken at once"


def _too_large() -> str:
    return f"the files sent together are larger than {settings.ARCHIVE_MAX_BYTES:,} bytes"


def _archive_entries(upload, budget: _Budget) -> list[SnapshotFile]:
    try:
        archive = zipfile.ZipFile(upload)
    except UnicodeDecodeError as error:
        # A name flagged as UTF-8 that is not: zipfile lists no entry of such an archive.
        return [
            SnapshotFile(
                upload.name,
                None,
                f"an entry's name is marked as UTF-8 text but is not: {_bytes_shown(error.object)}",
            )
        ]
    except _UNREADABLE:
        return [SnapshotFile(upload.name, None, "not a readable zip archive")]
    entries = [info for info in archive.infolist() if not (info.is_dir() and not info.file_size)]
    if len(entries) > budget.files:
        return [
            SnapshotFile(
                upload.name,
                None,
                f"the archive holds {len(entries):,} files; with the other files sent, at most "
                f"{settings.ARCHIVE_MAX_FILES:,} are taken at once",
            )
        ]
    budget.files -= len(entries)
    files = []
    for info in entries:
        name = _utf8_name(info)
        if name is None:
            raw = _raw_name(info)
            files.append(SnapshotFile(_bytes_shown(raw), None, "its name is not UTF-8 text"))
            continue
        problem = _name_problem(name)
        if problem:
            # Shown with its refusal, so written out: the page shows what the name holds.
            files.append(SnapshotFile(player_ids.escaped(name) or name or '""', None, problem))
            continue
        if budget.bytes <= 0:
            files.append(SnapshotFile(name, None, "the archive is too large once unpacked"))
            continue
        try:
            with archive.open(info) as entry:
                loaded = _bounded(name, info.file_size, entry.read, cap=budget.bytes)
        except _UNREADABLE:
            files.append(SnapshotFile(name, None, "this file of the archive cannot be unpacked"))
            continue
        if loaded.content is not None:
            budget.bytes -= len(loaded.content)
        files.append(loaded)
    return files


def _name_problem(name: str) -> str:
    # The name labels the file on the job's page: a control character or a right-to-left
    # override there could make it read as another file's.
    if problem := player_ids.id_problem(name):
        return f"its name {problem}"
    path = name.replace("\\", "/")
    parts = [part for part in path.split("/") if part not in ("", ".")]
    if not parts or parts[-1] == ".." or path.endswith("/"):
        return "its name holds no file name"
    if path.startswith("/") or ".." in parts or ":" in parts[0]:
        return "its name points outside the archive"
    if PurePosixPath(parts[-1]).suffix.lower() == ".zip":
        return "an archive inside the archive is not opened"
    return ""


def _raw_name(info: zipfile.ZipInfo) -> bytes:
    """The entry's name as stored: zipfile reads a name not flagged as UTF-8 as code page 437,
    which gives every byte a character, so it encodes back to the same bytes."""
    if info.flag_bits & _UTF8_FLAG:
        return info.orig_filename.encode()
    return info.orig_filename.encode("cp437")


def _utf8_name(info: zipfile.ZipInfo) -> str | None:
    """The entry's name as UTF-8 text, or None when its bytes are not UTF-8. Many tools store
    UTF-8 names without the flag that says so; zipfile then reads them as code page 437."""
    # As stored: zipfile's ``filename`` cuts a name at its first NUL, which would hide it.
    name = info.orig_filename
    if name.isascii() or info.flag_bits & _UTF8_FLAG:
        return name
    try:
        return name.encode("cp437").decode()
    except UnicodeError:
        return None


def _bytes_shown(raw: bytes) -> str:
    """Bytes written out: printable ASCII as itself (a backslash doubled), any other byte as
    \\xNN, and an empty name as a pair of quotes."""
    if not raw:
        return '""'
    return "".join(
        "\\\\" if byte == 0x5C else chr(byte) if 0x20 <= byte < 0x7F else f"\\x{byte:02x}"
        for byte in raw
    )


def _bounded(name: str, declared: int, read, *, cap: int | None = None) -> SnapshotFile:
    limit = settings.SNAPSHOT_MAX_BYTES if cap is None else min(cap, settings.SNAPSHOT_MAX_BYTES)
    if declared > limit:
        return SnapshotFile(name, None, f"{declared:,} bytes; the limit is {limit:,}")
    content = read(limit + 1)
    if len(content) > limit:
        return SnapshotFile(name, None, f"larger than the limit of {limit:,} bytes")
    if not content.strip():
        return SnapshotFile(name, None, "the file is empty")
    return SnapshotFile(name, content)
