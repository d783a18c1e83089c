#!/bin/sh
# Container entrypoint: wait for the database, optionally migrate, then run the given command
# (by default the gunicorn web server).
set -eu

cd "$(dirname "$0")/.."

python docker/wait_for_db.py

# gunicorn runs no system checks; without this a bad setting (a crash policy threshold, say)
# would only surface when the first snapshot is loaded.
python manage.py check --fail-level ERROR

# Off by default: with several replicas, exactly one release step should migrate, not every
# container racing at start-up.
if [ "${RUN_MIGRATIONS:-0}" = "1" ]; then
    if [ -n "${MIGRATE_DATABASE_URL:-}" ]; then
        # Two roles (docker/db-roles.sql): the owner migrates and grants the app's role, named
        # by DATABASE_URL, row access only; the server below connects as that role.
        app_role=$(python -c 'import os, dj_database_url
print(dj_database_url.parse(os.environ["DATABASE_URL"])["USER"])')
        DATABASE_URL="$MIGRATE_DATABASE_URL" python manage.py migrate --noinput
        DATABASE_URL="$MIGRATE_DATABASE_URL" python manage.py grant_app_role "$app_role"
    else
        python manage.py migrate --noinput
    fi
fi

if [ "$#" -eq 0 ]; then
    set -- gunicorn --config crashdesk/gunicorn.conf.py
fi
# exec, so the server is PID 1's direct replacement and receives SIGTERM from `docker stop`.
exec "$@"
