"""Query helpers the selectors share."""

from collections.abc import Callable

from django.db import connections, router
from django.db.models import Prefetch, QuerySet

# A tournament's payout structure is stored with it: 45,000 places (hundreds of kB of JSON) for
# a 300,000-entrant field. No list or page shows it, so every read that joins a tournament
# leaves it out; reading and decoding it took a few ms of each page that showed a big case.
BIG_TOURNAMENT_FIELDS = ("payouts",)

# The default of a cache read, returned for a key the cache does not hold: any value it holds,
# an empty list included, is a hit.
MISSING = object()


def _lean(queryset: QuerySet, tournament_path: str) -> QuerySet:
    """``queryset`` without the bulky tournament fields reached through ``tournament_path``."""
    return queryset.defer(*(f"{tournament_path}__{name}" for name in BIG_TOURNAMENT_FIELDS))


def _pk(value) -> int:
    return getattr(value, "pk", value)


def _rank(order: tuple[str, ...], value: str) -> int:
    return order.index(value) if value in order else len(order)


def _prefetch(lookup: str, queryset) -> Prefetch:
    return Prefetch(lookup, queryset=queryset)


# Reads whose SQL is compiled once per process (read_compiled), by name and database.
_compiled: dict[tuple[str, str], tuple] = {}


def read_compiled(model, name: str, build: Callable[..., QuerySet], *values) -> list[tuple]:
    """The rows of ``build(*values)``, a ``values_list`` queryset of ``model``, with its SQL
    compiled on the first call in the process (with stand-ins for ``values``) and only filled
    in afterwards.

    Building a query of a few joins through the ORM costs a page more Python than PostgreSQL
    takes to run it (a case page's: 1.1 ms). ``build`` must give the same SQL whatever the
    values (each value one parameter, none deciding a join or a clause); ``name`` tells the
    reads apart.
    """
    db = router.db_for_read(model)
    key = (name, db)
    if key not in _compiled:
        stand_ins = [_STAND_IN - slot for slot in range(len(values))]
        _compiled[key] = _compile(build(*stand_ins).using(db), stand_ins)
    sql, params, slots, compiler, converters = _compiled[key]
    params = [*params]
    for at, value in zip(slots, values, strict=True):
        params[at] = value
    with connections[db].cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    if converters:
        rows = list(compiler.apply_converters(rows, converters))
    return rows


# Stand-ins for the values while compiling: ids no row has.
_STAND_IN = -7_310_300


def _compile(queryset: QuerySet, stand_ins: list[int]) -> tuple:
    compiler = queryset.query.get_compiler(using=queryset.db)
    sql, params = compiler.as_sql()
    params = list(params)
    slots = [params.index(stand_in) for stand_in in stand_ins]
    if len(set(slots)) != len(stand_ins) or sum(p in stand_ins for p in params) != len(slots):
        raise ValueError("each value must be one parameter of the query")
    columns = [column[0] for column in compiler.select[: compiler.col_count]]
    return sql, tuple(params), slots, compiler, compiler.get_converters(columns)


def model_fields(model, *, leaving_out: tuple[str, ...] = ()) -> list[str]:
    """The attribute names of ``model``'s columns, as ``Model.from_db`` takes them."""
    return [f.attname for f in model._meta.concrete_fields if f.name not in leaving_out]


def from_row(model, names: list[str], row: tuple, start: int = 0):
    """The ``model`` instance of ``row[start:]``'s first ``len(names)`` columns, or None where
    they are the empty side of an outer join (no primary key)."""
    values = row[start : start + len(names)]
    if values[names.index(model._meta.pk.attname)] is None:
        return None
    return model.from_db(router.db_for_read(model), names, values)
