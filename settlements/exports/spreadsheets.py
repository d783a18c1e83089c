"""CSV downloads, streamed: the cashier's ledgers and the auditor's history exports.

Every row of every exported file is written by ``write_row`` and nowhere else, so a rule for
what may appear in a cell holds for all of them at once. Rows come from iterators and leave in
pieces of ``rows_per_chunk`` rows, so a 300,000-line settlement never sits whole in memory.

The rule is OWASP's against CSV injection. A spreadsheet opening a CSV file reads a cell that
starts with ``=``, ``+``, ``-`` or ``@`` (or a tab or carriage return before one) as a formula:
a player id ``=HYPERLINK(...)`` in a ledger would run on the cashier's machine. Such a text
cell gets a leading single quote, which makes spreadsheets treat the rest as text. The
full-width forms of those characters are escaped too: some spreadsheets fold them to ASCII
when they read a file. Only text is escaped: numbers (``int``, ``Decimal``) pass as they are,
so a negative amount stays a number in its column, and every export keeps its amounts typed.
The quote is visible in the cell and in the file; the exact values remain available to
machines through the JSON API, which needs no escaping.
"""

import csv
import io
from collections.abc import Iterable, Iterator, Sequence

from django.http import StreamingHttpResponse

ROWS_PER_CHUNK = 5000
FORMULA_STARTS = frozenset("=+-@\t\r\uff1d\uff0b\uff0d\uff20")


def csv_chunks(rows: Iterable[Sequence], *, rows_per_chunk: int = ROWS_PER_CHUNK) -> Iterator[str]:
    """The rows as CSV text, in pieces of about ``rows_per_chunk`` rows.

    The first row (the header) is read at once: an iterator that refuses to export (an
    unapproved settlement) raises here, before a response has been started.
    """
    rows = iter(rows)
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    write_row(writer, next(rows))
    return _pieces(rows, buffer, writer, rows_per_chunk)


def csv_download(chunks: Iterable[str], filename: str) -> StreamingHttpResponse:
    """A streamed attachment; ``filename`` must already be safe in a header."""
    response = StreamingHttpResponse(chunks, content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


def safe_cell(value):
    """A cell as a spreadsheet must show it: text that would start a formula, quoted."""
    if isinstance(value, str) and value[:1] in FORMULA_STARTS:
        return "'" + value
    return value


def write_row(writer, row: Sequence) -> None:
    writer.writerow([safe_cell(value) for value in row])


def _pieces(rows: Iterator[Sequence], buffer: io.StringIO, writer, size: int) -> Iterator[str]:
    for count, row in enumerate(rows, start=1):
        write_row(writer, row)
        if count % size == 0:
            yield _drain(buffer)
    yield _drain(buffer)


def _drain(buffer: io.StringIO) -> str:
    text = buffer.getvalue()
    buffer.seek(0)
    buffer.truncate()
    return text
