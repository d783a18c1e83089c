"""Django's PostgreSQL backend, with two savings on what every request pays.

The health check. With ``CONN_HEALTH_CHECKS`` Django sends ``SELECT 1`` before the first query
of every request, to replace a connection the server has dropped since (a restart, a
terminated backend, an idle timeout). Each of those makes the server send an error message and
close the socket, or the kernel close it, so the connection's socket has something to read
while no query is running. Looking for that costs one poll() and no round trip: a connection
with anything unread while idle, or already marked broken, is replaced. What this misses is a
server gone without a word (its host lost or rebooted, no FIN or RST reaching us): the next
request on that connection fails, once, and the connection is dropped at the request's end.
``SELECT 1`` would have caught a rebooted host's RST in time, and waited for the network's
timeout on a lost one, as that request's own query does now. Django's ``SELECT 1`` still runs
after a query failed, before the connection is reused.

Prepared statements. ``prepared_cursor()`` gives a cursor whose queries bind their
parameters on the server and are prepared there at their first run on a connection, so later
runs skip parsing and planning. Django's cursors stay as they are (client-side binding, never
prepared). psycopg prepares only when the connection's ``prepare_threshold`` is set
(``OPTIONS``, see settings); left unset, as behind a pooler that hands each transaction to
another server connection, the same queries run unprepared.
"""

import select

from django.db.backends.postgresql import base
from psycopg import pq


class _PreparingCursor(base.ServerBindingCursor):
    def execute(self, query, params=None, *, prepare=None, binary=None):
        return super().execute(query, params, prepare=True, binary=binary)


class DatabaseWrapper(base.DatabaseWrapper):
    def close_if_health_check_failed(self):
        if (
            self.connection is None
            or self.pool
            or not self.health_check_enabled
            or self.health_check_done
        ):
            return
        if not self._open_and_quiet():
            self.close()
        self.health_check_done = True

    def _open_and_quiet(self) -> bool:
        pgconn = self.connection.pgconn
        if pgconn.status != pq.ConnStatus.OK:
            return False
        poll = select.poll()
        poll.register(pgconn.socket, select.POLLIN)
        return not poll.poll(0)

    def prepared_cursor(self):
        """A cursor preparing each query it runs (see the module's docstring)."""
        self.close_if_health_check_failed()
        self.ensure_connection()
        with self.wrap_database_errors:
            cursor = _PreparingCursor(self.connection)
            tzloader = self.connection.adapters.get_loader(base.TIMESTAMPTZ_OID, pq.Format.TEXT)
            if self.timezone != tzloader.timezone:
                base.register_tzloader(self.timezone, cursor)
            return self._prepare_cursor(cursor)
