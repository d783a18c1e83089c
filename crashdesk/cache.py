"""Django's database cache, with a cheaper set() on PostgreSQL.

Django's set() counts the whole cache table (to decide whether to cull it), looks the key up,
then updates or inserts, inside a transaction: three queries and a savepoint or commit for each
entry. A review page's first view stores its rows that way, and the store was about 1 ms of
it. Here set() is one ``INSERT … ON CONFLICT`` with the value encoded exactly as Django encodes
it, and the count (with the cull when over ``MAX_ENTRIES``) runs on one write in
``CULL_CHECK_EVERY`` (an option, 50 unless set) of each process, so the table may pass its cap
by a few entries for a moment. add() and touch() keep Django's path; on SQLite so does set().
"""

import base64
import pickle
from datetime import UTC, datetime

from django.core.cache.backends.base import DEFAULT_TIMEOUT
from django.core.cache.backends.db import DatabaseCache as DjangoDatabaseCache
from django.db import connections, router
from django.utils.timezone import now as tz_now

CULL_CHECK_EVERY = 50


class DatabaseCache(DjangoDatabaseCache):
    def __init__(self, table, params):
        super().__init__(table, params)
        self.cull_check_every = params.get("OPTIONS", {}).get("CULL_CHECK_EVERY", CULL_CHECK_EVERY)
        self._writes = 0

    def set(self, key, value, timeout=DEFAULT_TIMEOUT, version=None):
        db = router.db_for_write(self.cache_model_class)
        connection = connections[db]
        if connection.vendor != "postgresql":
            return super().set(key, value, timeout, version)
        key = self.make_and_validate_key(key, version=version)
        timeout = self.get_backend_timeout(timeout)
        expires = datetime.max if timeout is None else datetime.fromtimestamp(timeout, tz=UTC)
        expires = connection.ops.adapt_datetimefield_value(expires.replace(microsecond=0))
        encoded = base64.b64encode(pickle.dumps(value, self.pickle_protocol)).decode("latin1")
        table = connection.ops.quote_name(self._table)
        with connection.cursor() as cursor:
            self._writes += 1
            if self.cull_check_every and self._writes % self.cull_check_every == 0:
                cursor.execute(f"SELECT COUNT(*) FROM {table}")  # noqa: S608 (the cache's table)
                count = cursor.fetchone()[0]
                if count > self._max_entries:
                    self._cull(db, cursor, tz_now().replace(microsecond=0), count)
            cursor.execute(
                f"INSERT INTO {table} (cache_key, value, expires) VALUES (%s, %s, %s)"  # noqa: S608
                " ON CONFLICT (cache_key) DO UPDATE"
                " SET value = EXCLUDED.value, expires = EXCLUDED.expires",
                [
                    key,
                    encoded,
                    connection.ops.adapt_datetimefield_value(expires.replace(microsecond=0)),
                ],
            )
