"""Downloads and documents built from the record: the ledger of an approved record, an
incident's payment batch, the auditor's export of every line, all streamed row by row as CSV
that spreadsheets open without running a formula, or as JSON."""
