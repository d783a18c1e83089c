"""`manage.py grant_app_role ROLE`: let the app's database role read and write rows, and no more.

Run as the role that owns the tables (the one that migrates, MIGRATE_DATABASE_URL in the
container), after `migrate`. ROLE gets SELECT, INSERT, UPDATE and DELETE on every table and
USAGE on every sequence, now and (through default privileges) for the tables later migrations
create. Not TRUNCATE, which no row trigger sees, and no ownership: only an owner may alter, drop
or disable a table or its triggers, and only an owner or a superuser may grant privileges.
ROLE itself is created by the database administrator (docker/db-roles.sql).
"""

from django.core.management.base import BaseCommand, CommandError
from django.db import connections

from settlements.triggers import harden_ignore


class Command(BaseCommand):
    help = "Grant the app's database role row access (not ownership) to every table."

    def add_arguments(self, parser):
        parser.add_argument("role", help="the role the app connects as (DATABASE_URL's user)")
        parser.add_argument("--database", default="default", help="the connection to grant with")

    def handle(self, *, role: str, database: str, **options):
        connection = connections[database]
        if connection.vendor != "postgresql":
            raise CommandError("Database roles are a PostgreSQL feature; nothing to grant here.")
        quote = connection.ops.quote_name
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT rolsuper OR rolbypassrls OR rolcreaterole, pg_has_role(%s, current_user,"
                " 'MEMBER') FROM pg_roles WHERE rolname = %s",
                [role, role],
            )
            found = cursor.fetchone()
            if found is None:
                raise CommandError(f"No role {role!r}; create it first (docker/db-roles.sql).")
            if any(found):
                raise CommandError(
                    f"Role {role!r} is a superuser, may create roles or acts as the owner: "
                    "it could disable the triggers that guard the record. Use a plain role."
                )
            name = quote(role)
            for statement in (
                f"GRANT CONNECT ON DATABASE {quote(connection.settings_dict['NAME'])} TO {name}",
                f"GRANT USAGE ON SCHEMA public TO {name}",
                f"GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO {name}",
                f"GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO {name}",
                "ALTER DEFAULT PRIVILEGES IN SCHEMA public "
                f"GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO {name}",
                "ALTER DEFAULT PRIVILEGES IN SCHEMA public "
                f"GRANT USAGE, SELECT ON SEQUENCES TO {name}",
            ):
                cursor.execute(statement)
        harden_ignore(connection)
        self.stdout.write(f"Role {role} may read and write rows; it owns nothing.")
