"""Django admin: a window onto every record for the site's administrators, not a door.

Business records change only through the services, which check roles, keep the state
machine and write the event log; the admin must not bypass them. So nothing here adds,
changes or deletes a record, and simple-history's version pages show old versions without
saving them back: its form view would save whatever is POSTed to it (a "revert", even with
reverting disabled), so it answers GET only. Users and groups are the admin's to manage; their
changes are audited as business events (settlements.services.access_changes), as is every
entry of the admin's own log: so the admin deletes one record at a time (its bulk delete writes
no entry Django signals).
"""

from django.contrib import admin
from django.http import HttpResponseNotAllowed
from simple_history.admin import SimpleHistoryAdmin

from settlements.models import (
    ApiToken,
    AuditCheckpoint,
    Case,
    Compensation,
    CompensationItem,
    Decision,
    Event,
    IcmValuation,
    IcmValue,
    Incident,
    Job,
    JobItem,
    LedgerRelease,
    PaymentConfirmation,
    PaymentTally,
    PrizeWithdrawal,
    Profile,
    Reissue,
    Rulebook,
    RulebookVersion,
    Settlement,
    Simulation,
    SimulationResult,
    Snapshot,
    Tournament,
)

admin.site.disable_action("delete_selected")


class ReadOnlyMixin:
    """No adding, changing or deleting: the change form becomes a view page."""

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False

    def history_view(self, request, object_id, extra_context=None):
        if request.method not in ("GET", "HEAD"):
            return HttpResponseNotAllowed(["GET", "HEAD"])
        return super().history_view(request, object_id, extra_context)


class HistoryWindowAdmin(ReadOnlyMixin, SimpleHistoryAdmin):
    """A record and its versions, to look at only."""

    def has_change_history_permission(self, request, obj=None):
        return False

    def history_form_view(self, request, object_id, version_id, extra_context=None):
        if request.method not in ("GET", "HEAD"):
            return HttpResponseNotAllowed(["GET", "HEAD"])
        return super().history_form_view(request, object_id, version_id, extra_context)


class BulkRowsAdmin(ReadOnlyMixin, admin.ModelAdmin):
    """For the tables that may hold millions of rows: no full counts, search by player."""

    show_full_result_count = False
    list_per_page = 100
    search_fields = ["player"]


@admin.register(Tournament)
class TournamentAdmin(HistoryWindowAdmin):
    list_display = ["operator_id", "name", "type", "currency", "scheduled_start", "created_at"]
    list_filter = ["type", "currency"]
    search_fields = ["operator_id", "name"]


@admin.register(Incident)
class IncidentAdmin(HistoryWindowAdmin):
    list_display = ["id", "title", "started_at", "reported_by", "closed_at"]
    list_filter = [("closed_at", admin.EmptyFieldListFilter)]
    list_select_related = ["reported_by"]
    search_fields = ["title", "description"]


@admin.register(Case)
class CaseAdmin(HistoryWindowAdmin):
    list_display = ["id", "tournament", "kind", "status", "stage", "entrants", "incident"]
    list_filter = ["kind", "status", "stage"]
    list_select_related = ["tournament", "incident"]
    search_fields = ["tournament__operator_id", "tournament__name"]
    exclude = ["snapshot"]


@admin.register(Profile)
class ProfileAdmin(HistoryWindowAdmin):
    list_display = ["user", "time_zone"]
    list_select_related = ["user"]


@admin.register(Snapshot)
class SnapshotAdmin(ReadOnlyMixin, admin.ModelAdmin):
    list_display = ["id", "sha256", "size_bytes", "received_by", "received_at"]
    list_select_related = ["received_by"]
    search_fields = ["sha256"]
    # The text may be 10 MB; it is not rendered in the list, only on the view page.
    fields = ["sha256", "size_bytes", "received_by", "received_at", "text"]


@admin.register(Decision)
class DecisionAdmin(HistoryWindowAdmin):
    list_display = ["id", "case", "option", "decided_by", "decided_at", "reschedule_at"]
    list_filter = ["option"]
    list_select_related = ["case__tournament", "decided_by"]


@admin.register(Settlement)
class SettlementAdmin(HistoryWindowAdmin):
    list_display = [
        "id",
        "case",
        "kind",
        "status",
        "remedy",
        "prepared_by",
        "approved_by",
        "prepared_at",
    ]
    list_filter = ["kind", "status", "stage", "remedy"]
    list_select_related = ["case__tournament", "prepared_by", "approved_by"]
    search_fields = ["case__tournament__operator_id"]


@admin.register(IcmValuation)
class IcmValuationAdmin(HistoryWindowAdmin):
    list_display = ["id", "settlement", "method", "status", "players", "samples", "finished_at"]
    list_filter = ["method", "status"]
    exclude = ["running_sums"]


@admin.register(IcmValue)
class IcmValueAdmin(BulkRowsAdmin):
    list_display = ["valuation", "player", "chips", "amount", "policy_amount", "difference"]


class CompensationItemInline(admin.TabularInline):
    model = CompensationItem
    extra = 0
    can_delete = False

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False


@admin.register(Compensation)
class CompensationAdmin(HistoryWindowAdmin):
    list_display = ["id", "case", "status", "proposed_by", "approved_by", "proposed_at"]
    list_filter = ["status"]
    list_select_related = ["case__tournament", "proposed_by", "approved_by"]
    inlines = [CompensationItemInline]


@admin.register(PrizeWithdrawal)
class PrizeWithdrawalAdmin(HistoryWindowAdmin):
    list_display = ["id", "case", "player", "prize", "outcome", "decided_by", "decided_at"]
    list_filter = ["outcome"]
    list_select_related = ["case__tournament", "decided_by"]
    search_fields = ["player"]


@admin.register(Event)
class EventAdmin(ReadOnlyMixin, admin.ModelAdmin):
    list_display = ["at", "type", "actor", "incident", "case", "subject_type", "subject_id"]
    list_filter = ["type"]
    list_select_related = ["actor", "incident", "case__tournament"]
    date_hierarchy = "at"
    search_fields = ["reason", "actor__username"]


@admin.register(ApiToken)
class ApiTokenAdmin(HistoryWindowAdmin):
    list_display = [
        "name",
        "user",
        "created_at",
        "last_used_at",
        "expires_at",
        "revoked_at",
        "scopes",
    ]
    list_select_related = ["user"]
    exclude = ["token_hash"]


class JobItemInline(admin.TabularInline):
    model = JobItem
    fields = ("position", "label", "status", "attempts", "message", "case")
    readonly_fields = fields
    extra = 0
    can_delete = False


@admin.register(Job)
class JobAdmin(ReadOnlyMixin, admin.ModelAdmin):
    """Background work, for looking into a stuck or failed job; the pages run and retry it."""

    list_display = ("pk", "kind", "target", "status", "created_by", "created_at")
    list_filter = ("kind", "status")
    inlines = [JobItemInline]


@admin.register(LedgerRelease)
class LedgerReleaseAdmin(ReadOnlyMixin, admin.ModelAdmin):
    list_display = [
        "id",
        "record",
        "first_position",
        "last_position",
        "line_count",
        "case",
        "released_at",
    ]
    list_filter = ["record"]
    list_select_related = ["case__tournament"]


@admin.register(PaymentTally)
class PaymentTallyAdmin(ReadOnlyMixin, admin.ModelAdmin):
    list_display = ["release", "paid_lines", "failed_lines", "reissued_lines", "updated_at"]


@admin.register(PaymentConfirmation)
class PaymentConfirmationAdmin(BulkRowsAdmin):
    list_display = [
        "idempotency_key",
        "player",
        "unit",
        "amount",
        "status",
        "external_reference",
        "at",
    ]
    list_filter = ["status"]
    search_fields = ["idempotency_key", "external_reference", "player"]


@admin.register(Reissue)
class ReissueAdmin(HistoryWindowAdmin):
    list_display = ["id", "original_key", "player", "amount", "unit", "status", "proposed_by"]
    list_filter = ["status"]
    list_select_related = ["proposed_by"]
    search_fields = ["original_key", "player"]


@admin.register(Rulebook)
class RulebookAdmin(HistoryWindowAdmin):
    list_display = ["key", "created_at"]
    search_fields = ["key"]


@admin.register(RulebookVersion)
class RulebookVersionAdmin(HistoryWindowAdmin):
    list_display = ["id", "rulebook", "number", "status", "effective_from", "proposed_by"]
    list_filter = ["status"]
    list_select_related = ["rulebook", "proposed_by"]


@admin.register(Simulation)
class SimulationAdmin(HistoryWindowAdmin):
    list_display = ["id", "version", "requested_by", "requested_at", "case_count", "finished_at"]
    list_select_related = ["version__rulebook", "requested_by"]


@admin.register(SimulationResult)
class SimulationResultAdmin(ReadOnlyMixin, admin.ModelAdmin):
    list_display = ["id", "simulation", "case", "stage_then", "stage_draft", "needs_decision"]
    list_filter = ["needs_decision"]


@admin.register(AuditCheckpoint)
class AuditCheckpointAdmin(ReadOnlyMixin, admin.ModelAdmin):
    list_display = ["id", "at", "events", "first", "full", "head"]
    list_filter = ["full"]
