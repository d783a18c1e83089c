"""Forms of the web screens: they read and tidy what a person typed; the services decide.

A service refusal (``DomainError``) carries the field it concerns, so views hand it back to
the form with ``add_domain_error`` and the message appears next to that field.
"""

import re

from django import forms
from django.conf import settings
from django.contrib.auth import get_user_model
from django.utils import timezone

from settlements import bounds
from settlements.errors import DomainError
from settlements.models import (
    PROSE_MAX_LENGTH,
    Incident,
    PrizeWithdrawal,
    Tournament,
    TournamentType,
    Unit,
)
from settlements.money import AmountError, parse_amount
from settlements.rules.policy import POLICY_KEYS
from settlements.services.compensation import CompensationEntry
from settlements.services.decisions import check_invitees, check_reschedule_date
from settlements.services.individual_cases import NewTournament, check_prize_amount
from settlements.templatetags.remedies import option_label


class DomainErrorsMixin:
    # A service's name for a value -> the form field that holds it, where the two differ.
    field_aliases: dict[str, str] = {}

    def add_domain_error(self, error: DomainError) -> None:
        field = self.field_aliases.get(error.field, error.field)
        self.add_error(field if field in self.fields else None, error.message)


class IncidentForm(DomainErrorsMixin, forms.Form):
    title = forms.CharField(
        max_length=200,
        help_text="What went down, e.g. “Game server cluster B outage”.",
    )
    started_at = forms.DateTimeField(
        label="Started at",
        widget=forms.DateTimeInput(attrs={"type": "datetime-local"}, format="%Y-%m-%dT%H:%M"),
        input_formats=["%Y-%m-%dT%H:%M", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%d %H:%M"],
    )
    description = forms.CharField(
        required=False,
        max_length=PROSE_MAX_LENGTH,
        widget=forms.Textarea(attrs={"rows": 4}),
        help_text="Optional: what is known so far, ticket numbers, who is investigating.",
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # The browser sends a wall-clock time without a zone; it is read in the site's zone,
        # which every page also shows times in, so say which one that is.
        self.fields[
            "started_at"
        ].help_text = (
            f"When players were first cut off, in {timezone.get_current_timezone_name()} time."
        )

    def clean_started_at(self):
        started_at = self.cleaned_data["started_at"]
        if started_at > timezone.now():
            raise forms.ValidationError("An incident cannot start in the future.")
        return started_at


class SnapshotForm(DomainErrorsMixin, forms.Form):
    """A snapshot as a file or as pasted JSON; exactly one of the two."""

    file = forms.FileField(
        required=False,
        label="Snapshot file",
        help_text="The JSON file the game server exported at the crash.",
        widget=forms.ClearableFileInput(attrs={"accept": ".json,application/json"}),
    )
    text = forms.CharField(
        required=False,
        strip=False,
        label="Or paste the snapshot",
        widget=forms.Textarea(attrs={"rows": 12, "spellcheck": "false", "autocomplete": "off"}),
    )

    def clean(self):
        cleaned = super().clean()
        upload = cleaned.get("file")
        text = cleaned.get("text") or ""
        if upload and text.strip():
            raise forms.ValidationError(
                "Give the snapshot once: choose a file or paste it, not both."
            )
        if not upload and not text.strip():
            raise forms.ValidationError("Choose the snapshot file or paste its JSON.")
        limit = settings.SNAPSHOT_MAX_BYTES
        size = upload.size if upload else len(text.encode())
        if size > limit:
            raise forms.ValidationError(
                f"The snapshot is {size:,} bytes; the limit is {limit:,} bytes."
            )
        return cleaned

    @property
    def snapshot(self) -> bytes | str:
        """The document to hand to the service (call after is_valid())."""
        upload = self.cleaned_data.get("file")
        if upload:
            return b"".join(upload.chunks())
        return self.cleaned_data["text"]

    @property
    def source_name(self) -> str:
        upload = self.cleaned_data.get("file") if hasattr(self, "cleaned_data") else None
        return upload.name if upload else ""


# --- Decisions, reviews, compensation, prize withdrawals, individual cases, history ----------
#
# Forms with a confirmation step are posted twice: first to check them and show what will
# happen, then, carried in hidden fields, with step=confirm to do it (see views/confirming.py).

_SEPARATORS = re.compile(r"[\s,;]+")
# Within one compensation line a comma may be a decimal comma ("12,50"), so only a comma
# followed by a space separates the player from the amount.
_ENTRY_SEPARATORS = re.compile(r"[\s;]+|,\s+")
_UNIT_WORDS = {
    "cash": Unit.CASH,
    "t$": Unit.TDOLLARS,
    "tdollars": Unit.TDOLLARS,
    "fpp": Unit.FPP,
    "seat": Unit.TICKETS,
    "seats": Unit.TICKETS,
    "tickets": Unit.TICKETS,
}
_DATETIME_INPUT = {
    "widget": forms.DateTimeInput(attrs={"type": "datetime-local"}, format="%Y-%m-%dT%H:%M"),
    "input_formats": ["%Y-%m-%dT%H:%M", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%d %H:%M"],
}


def _prose(rows: int) -> forms.Textarea:
    """A box for sentences (a reason, an outcome), sized to them."""
    return forms.Textarea(attrs={"rows": rows, "class": "textarea--prose"})


def _ids(rows: int) -> forms.Textarea:
    """A box for player ids or amounts, one per line."""
    return forms.Textarea(attrs={"rows": rows, "class": "textarea--short", "spellcheck": "false"})


def player_list(text: str) -> list[str]:
    """Player ids separated by new lines, commas, semicolons or spaces, in the order given."""
    return [player for player in _SEPARATORS.split(text.strip()) if player]


class DecisionForm(DomainErrorsMixin, forms.Form):
    """The Marketing Manager's choice among the options the rules leave open for a case."""

    option = forms.ChoiceField(widget=forms.RadioSelect, label="Option")
    reason = forms.CharField(
        widget=_prose(3),
        max_length=PROSE_MAX_LENGTH,
        label="Why this option",
        help_text="Kept with the decision for the approvers and the auditors.",
    )
    reschedule_at = forms.DateTimeField(required=False, label="New date", **_DATETIME_INPUT)
    invited = forms.CharField(
        required=False,
        widget=_ids(3),
        label="Invite only these players",
        help_text="Player ids, one per line. Leave it empty to invite the list above.",
    )

    field_aliases = {"invited_players": "invited"}

    def __init__(self, *args, case, locked: bool = False, **kwargs):
        super().__init__(*args, **kwargs)
        self.case = case
        self.fields["option"].choices = [
            (code, option_label(code)) for code in case.decision_options
        ]
        zone = timezone.get_current_timezone_name()
        self.fields["reschedule_at"].help_text = f"When the freeroll runs again, in {zone} time."
        # A decision that can no longer change is shown, not offered.
        for field in self.fields.values():
            field.disabled = locked

    def clean(self):
        cleaned = super().clean()
        if cleaned.get("option") != "reschedule":
            # Values typed before switching to another option are not part of the decision.
            cleaned["reschedule_at"] = None
            cleaned["invited"] = ""
            return cleaned
        if "reschedule_at" not in self.errors:
            try:
                check_reschedule_date(cleaned.get("reschedule_at"))
            except DomainError as error:
                self.add_domain_error(error)
        if self.invited_players is not None:
            try:
                check_invitees(case=self.case, invited=self.invited_players)
            except DomainError as error:
                self.add_domain_error(error)
        return cleaned

    @property
    def invited_players(self) -> list[str] | None:
        """The hand-picked invitation list, or None for the rules' default list."""
        return player_list(self.cleaned_data.get("invited") or "") or None


class ReasonForm(DomainErrorsMixin, forms.Form):
    reason = forms.CharField(
        widget=_prose(3),
        max_length=PROSE_MAX_LENGTH,
        label="Reason",
        help_text="Recorded with your name and the time.",
    )


class BulkDecisionForm(ReasonForm):
    """One answer for several alike cases: the reason, and for a reschedule the new date, the
    same for all and checked as a single decision's is. Each freeroll then invites the players
    the rules invite by default (a hand-picked list belongs to one case's own decision)."""

    reschedule_at = forms.DateTimeField(required=False, label="New date", **_DATETIME_INPUT)

    def __init__(self, *args, option: str = "", **kwargs):
        super().__init__(*args, **kwargs)
        self.option = option
        zone = timezone.get_current_timezone_name()
        self.fields[
            "reschedule_at"
        ].help_text = (
            f"When these freerolls run again, in {zone} time; needed for a reschedule only."
        )

    def clean(self):
        cleaned = super().clean()
        if self.option != "reschedule":
            # A date typed before choosing another answer is not part of the decision.
            cleaned["reschedule_at"] = None
        elif "reschedule_at" not in self.errors:
            try:
                check_reschedule_date(cleaned.get("reschedule_at"))
            except DomainError as error:
                self.add_domain_error(error)
        return cleaned


class CompensationForm(DomainErrorsMixin, forms.Form):
    """Named players and amounts the house pays for an injustice, one player per line."""

    entries = forms.CharField(
        widget=_ids(6),
        label="Players and amounts",
        help_text=(
            "One player per line: the player id, the amount, and optionally the unit "
            "(cash, T$ or FPP; cash when left out). For example: p000123 25.00"
        ),
    )
    reason = forms.CharField(
        widget=_prose(3),
        max_length=PROSE_MAX_LENGTH,
        label="What went wrong for these players",
    )
    # Set when the form was opened from the ICM second opinion: the proposal records its figures.
    from_icm = forms.BooleanField(required=False, widget=forms.HiddenInput)

    def __init__(self, *args, currency: str, **kwargs):
        super().__init__(*args, **kwargs)
        self.currency = currency

    @property
    def opened_from_icm(self) -> bool:
        return self.fields["from_icm"].to_python(self["from_icm"].value())

    def clean_entries(self) -> list[CompensationEntry]:
        entries, problems = [], []
        lines = [line for line in self.cleaned_data["entries"].splitlines() if line.strip()]
        for number, line in enumerate(lines, start=1):
            parts = _ENTRY_SEPARATORS.split(line.strip())
            if len(parts) not in (2, 3):
                problems.append(f"Line {number}: write the player id, then the amount.")
                continue
            unit = Unit.CASH
            if len(parts) == 3:
                unit = _UNIT_WORDS.get(parts[2].lower())
                if unit not in (Unit.CASH, Unit.TDOLLARS, Unit.FPP):
                    problems.append(f"Line {number}: the unit is cash, T$ or FPP.")
                    continue
            try:
                amount = parse_amount(parts[1], unit=unit, currency=self.currency)
            except AmountError as error:
                problems.append(f"Line {number}: {error}")
                continue
            entries.append(CompensationEntry(player=parts[0], amount=amount, unit=unit))
        if problems:
            raise forms.ValidationError(problems)
        return entries


class PrizeWithdrawalForm(DomainErrorsMixin, forms.Form):
    """A Tournament Manager's call on a prize given in error."""

    player = forms.CharField(max_length=200, label="Player id")
    prize = forms.CharField(
        max_length=200,
        label="The prize given in error",
        help_text="e.g. “Cash paid instead of a seat ticket for the Sunday Main”.",
    )
    amount = forms.CharField(required=False, max_length=30, label="Amount to take back")
    unit = forms.ChoiceField(
        required=False,
        label="Unit of the amount",
        choices=[("", "—"), *Unit.choices],
    )
    outcome = forms.ChoiceField(widget=forms.RadioSelect, choices=PrizeWithdrawal.Outcome.choices)
    reason = forms.CharField(widget=_prose(3), max_length=PROSE_MAX_LENGTH, label="Why")

    def __init__(self, *args, currency: str, **kwargs):
        super().__init__(*args, **kwargs)
        self.currency = currency
        self.fields["amount"].help_text = "Needed to withdraw the prize; empty when it is kept."

    def clean(self):
        cleaned = super().clean()
        raw, unit = (cleaned.get("amount") or "").strip(), cleaned.get("unit") or ""
        cleaned["amount_minor"] = None
        try:
            check_prize_amount(
                amount_given=bool(raw), unit=unit, outcome=cleaned.get("outcome") or ""
            )
        except DomainError as error:
            self.add_domain_error(error)
            return cleaned
        if raw:
            try:
                cleaned["amount_minor"] = parse_amount(raw, unit=unit, currency=self.currency)
            except AmountError as error:
                self.add_error("amount", str(error))
        return cleaned


class IndividualCaseForm(DomainErrorsMixin, forms.Form):
    """One or a few players hit while the tournament went on for everyone else. A tournament
    CrashDesk does not know yet (one that never crashed) is registered with the case."""

    tournament = forms.CharField(
        max_length=200,
        label="Tournament id",
        help_text="The operator's id of the tournament.",
    )
    players = forms.CharField(
        widget=_ids(3),
        label="Players concerned",
        help_text="Player ids, one per line.",
    )
    description = forms.CharField(
        widget=_prose(4), max_length=PROSE_MAX_LENGTH, label="What happened to them"
    )
    incident = forms.ModelChoiceField(
        queryset=Incident.objects.none(),
        required=False,
        label="Part of an open incident",
        empty_label="No incident",
    )
    # Only for a tournament not registered yet; a registered one keeps what it has.
    type = forms.ChoiceField(
        required=False, label="Type", choices=TournamentType.choices, initial="regular"
    )
    currency = forms.CharField(
        required=False,
        max_length=3,
        label="Currency",
        help_text="Three capital letters, e.g. USD.",
    )
    buy_in = forms.CharField(
        required=False,
        max_length=30,
        label="Buy-in",
        help_text="Without the fee, e.g. 10.00 (none for a freeroll).",
    )
    fee = forms.CharField(required=False, max_length=30, label="Fee")
    name = forms.CharField(required=False, max_length=200, label="Tournament name")

    field_aliases = {"operator_id": "tournament"}
    NEW_TOURNAMENT_FIELDS = ("type", "currency", "buy_in", "fee", "name")

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["incident"].queryset = Incident.objects.filter(closed_at__isnull=True)

    def clean_tournament(self) -> Tournament | str:
        """The registered tournament, or the id of one to register."""
        operator_id = self.cleaned_data["tournament"].strip()
        return Tournament.objects.filter(operator_id=operator_id).first() or operator_id

    def clean_players(self) -> list[str]:
        return player_list(self.cleaned_data["players"])

    def clean(self):
        cleaned = super().clean()
        chosen = cleaned.get("tournament")
        if not isinstance(chosen, str):
            return cleaned
        currency = (cleaned.get("currency") or "").strip().upper()
        if not currency:
            self.add_error(
                "tournament",
                f"No registered tournament has the id “{chosen}”. To register it with this "
                "case, give its type, currency and buy-in below.",
            )
            return cleaned
        amounts = {}
        for field in ("buy_in", "fee"):
            raw = (cleaned.get(field) or "").strip()
            amounts[field] = None
            try:
                if raw:
                    amounts[field] = parse_amount(raw, unit=Unit.CASH, currency=currency)
            except AmountError as error:
                self.add_error(field, str(error))
        if not self.errors:
            cleaned["tournament"] = NewTournament(
                operator_id=chosen,
                type=cleaned.get("type") or TournamentType.REGULAR,
                currency=currency,
                name=(cleaned.get("name") or "").strip(),
                **amounts,
            )
        return cleaned


class ResolveForm(DomainErrorsMixin, forms.Form):
    outcome = forms.CharField(
        widget=_prose(4),
        max_length=PROSE_MAX_LENGTH,
        label="Outcome",
        help_text="What was decided for the players, including any compensation proposed.",
    )


class WholeNumberField(forms.Field):
    """A number above zero written in ASCII digits (settlements.bounds), e.g. a record's
    number in a filter. Django's IntegerField would also read "١" or "+7" as numbers."""

    widget = forms.NumberInput(attrs={"min": 1})

    def to_python(self, value):
        text = (value or "").strip()
        if not text:
            return None
        number = bounds.whole_number(text)
        if not number:
            raise forms.ValidationError("Write a whole number above zero, in digits 0-9.")
        return number


class HistoryFilterForm(forms.Form):
    """The auditor's filters; every one optional. Read with GET, so links keep them."""

    incident = WholeNumberField(required=False, label="Incident #")
    case = WholeNumberField(required=False, label="Case #")
    tournament = forms.CharField(required=False, max_length=200, label="Tournament id")
    # Ids are kept exactly as typed: a space or a look-alike character makes another player.
    player = forms.CharField(
        required=False,
        max_length=200,
        strip=False,
        label="Player id",
        help_text="The cases this player was in or that name them.",
    )
    user = forms.CharField(required=False, max_length=150, label="User")
    model = forms.ChoiceField(required=False, label="Record type")
    since = forms.DateField(
        required=False, label="From", widget=forms.DateInput(attrs={"type": "date"})
    )
    until = forms.DateField(
        required=False,
        label="To (inclusive)",
        widget=forms.DateInput(attrs={"type": "date"}),
    )

    def __init__(self, *args, model_choices, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["model"].choices = [("", "Every type"), *model_choices]

    def clean_tournament(self) -> Tournament | None:
        operator_id = self.cleaned_data["tournament"].strip()
        if not operator_id:
            return None
        tournament = Tournament.objects.filter(operator_id=operator_id).first()
        if tournament is None:
            raise forms.ValidationError(f"No tournament has the id “{operator_id}”.")
        return tournament

    def clean_user(self):
        username = self.cleaned_data["user"].strip()
        if not username:
            return None
        user = get_user_model().objects.filter(username=username).first()
        if user is None:
            raise forms.ValidationError(f"No user is called “{username}”.")
        return user

    def clean_since(self):
        return self._day("since")

    def clean_until(self):
        return self._day("until")

    def _day(self, name: str):
        day = self.cleaned_data[name]
        if day is not None and (problem := bounds.date_problem(day)):
            raise forms.ValidationError(f"The day {problem}.")
        return day

    def clean(self):
        cleaned = super().clean()
        since, until = cleaned.get("since"), cleaned.get("until")
        if since and until and since > until:
            self.add_error("until", "The end date is before the start date.")
        return cleaned


class RulebookVersionForm(DomainErrorsMixin, forms.Form):
    """A proposed rulebook version: one field per policy parameter (the engine's registry,
    each with its explanation and default), the players' text, when it takes effect, why."""

    key = forms.CharField(
        max_length=64,
        label="Rulebook",
        help_text="Lower-case letters, digits and hyphens, e.g. eu-main; a new key makes a new "
        "rulebook.",
    )
    effective_from = forms.DateTimeField(
        label="Takes effect",
        help_text="For tournaments starting at or after this time; it must be in the future.",
        **_DATETIME_INPUT,
    )
    text = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 10}),
        label="Text shown to players",
        help_text="Markdown. Raw HTML is shown as text; scripts and event attributes are refused.",
    )
    reason = forms.CharField(
        widget=_prose(3), max_length=PROSE_MAX_LENGTH, label="Reason for the change"
    )

    def __init__(self, *args, initial_parameters: dict | None = None, **kwargs):
        super().__init__(*args, **kwargs)
        self.field_aliases = {}
        for key in POLICY_KEYS:
            value = (initial_parameters or {}).get(key.name, key.default)
            default = key.default
            if isinstance(default, bool):
                default = "yes" if default else "no"
            help_text = f"{key.explanation} Default: {default}."
            if key.type is bool:
                field = forms.TypedChoiceField(
                    choices=(("true", "Yes"), ("false", "No")),
                    coerce=lambda v: v == "true",
                    initial="true" if value else "false",
                )
            elif key.choices:
                field = forms.ChoiceField(choices=[(c, c) for c in key.choices], initial=value)
            else:
                field = forms.IntegerField(
                    min_value=key.minimum, max_value=key.maximum, initial=value
                )
            field.label, field.help_text = key.name.replace("_", " ").capitalize(), help_text
            self.fields[f"p_{key.name}"] = field
            self.field_aliases[f"parameters.{key.name}"] = f"p_{key.name}"

    def parameter_fields(self):
        return [self[f"p_{key.name}"] for key in POLICY_KEYS]

    def parameters(self) -> dict:
        return {key.name: self.cleaned_data[f"p_{key.name}"] for key in POLICY_KEYS}


class SimulationForm(forms.Form):
    """Which past cases a simulation settles again: any combination, all when left empty."""

    incident = forms.IntegerField(required=False, min_value=1, label="Incident number")
    crashed_from = forms.DateTimeField(required=False, label="Crashed from", **_DATETIME_INPUT)
    crashed_until = forms.DateTimeField(required=False, label="Crashed before", **_DATETIME_INPUT)
    rulebook = forms.CharField(required=False, max_length=64, label="Settled under rulebook")
