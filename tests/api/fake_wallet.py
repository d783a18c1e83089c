"""A reference cashier for the tests: a tiny wallet system that talks to CrashDesk over HTTP
the way a real one would, using nothing but the documented API.

It reads the ledger feed from its cursor, credits (or, for negative lines, debits) each
player's balance once per idempotency key, fails the lines its ``declines`` rule says, retries
some failures itself, and posts its confirmations in batches; an answer "lost" on the way is
sent again, which CrashDesk must take as a harmless repeat.
"""

import json
import urllib.request
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime


@dataclass
class FakeWallet:
    base_url: str
    token: str
    # key -> "permanent" (stays failed) or "transient" (paid when retried), else paid at once.
    declines: Callable[[str], str | None]
    batch_size: int = 25
    page_size: int = 17
    cursor: str | None = None
    balances: dict = field(default_factory=lambda: defaultdict(int))
    credited: Counter = field(default_factory=Counter)
    failed: set = field(default_factory=set)
    lines_read: list = field(default_factory=list)
    answers: Counter = field(default_factory=Counter)
    references: int = 0

    # --- HTTP ---------------------------------------------------------------------------------

    def _call(self, method: str, path: str, body: dict | None = None) -> dict:
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(
            self.base_url + path,
            data=data,
            method=method,
            headers={"Authorization": f"Bearer {self.token}", "Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=30) as response:
            assert response.status == 200, response.status
            return json.loads(response.read())

    # --- The cashier's day --------------------------------------------------------------------

    def read_feed(self) -> list[dict]:
        """Every line after the cursor; the cursor moves past them."""
        new = []
        while True:
            query = f"?limit={self.page_size}" + (f"&after={self.cursor}" if self.cursor else "")
            page = self._call("GET", f"/api/v1/ledger{query}")
            new += page["lines"]
            self.cursor = page["cursor"]
            if not page["more"]:
                break
        self.lines_read += new
        return new

    def pay(self, lines: list[dict]) -> list[dict]:
        """Pay (or collect) each line once; the confirmations to send."""
        confirmations = []
        for line in lines:
            key = line["idempotency_key"]
            outcome = self.declines(key)
            if outcome is not None:
                self.failed.add(key)
                confirmations.append(self._confirmation(line, "failed", f"declined:{outcome}"))
                if outcome == "transient":
                    # The wallet tries again later on its own, under the same key.
                    confirmations.append(self._credit(line))
            else:
                confirmations.append(self._credit(line))
        return confirmations

    def confirm(self, confirmations: list[dict], *, lose_answer_of_batch: int | None = None):
        for number, start in enumerate(range(0, len(confirmations), self.batch_size)):
            batch = {"confirmations": confirmations[start : start + self.batch_size]}
            answer = self._call("POST", "/api/v1/ledger/confirmations", batch)
            if number == lose_answer_of_batch:
                # The answer never arrived: send the same batch again.
                answer = self._call("POST", "/api/v1/ledger/confirmations", batch)
            for result in answer["results"]:
                self.answers[result["outcome"]] += 1
                assert result["outcome"] != "refused", result

    def _credit(self, line: dict) -> dict:
        key = line["idempotency_key"]
        if self.credited[key] == 0:
            self.balances[line["player"], line["unit"], line["currency"]] += line["amount"]
        self.credited[key] += 1
        self.references += 1
        return self._confirmation(line, "paid", f"wal-{self.references:06d}")

    def _confirmation(self, line: dict, status: str, reference: str) -> dict:
        return {
            "idempotency_key": line["idempotency_key"],
            "status": status,
            "external_reference": reference,
            "at": datetime.now(UTC).isoformat(),
            "amount": line["amount"],
        }
