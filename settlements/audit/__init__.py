"""An incident's sealed record, taken away: its archive's layout (``layout``) and the offline
verifier (``verify``; ``python -m settlements.audit verify ARCHIVE``). Standard library, the
engine and the seal formats only: no Django, no database."""
