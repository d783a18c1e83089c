-- The two database roles of a CrashDesk deployment, for the PostgreSQL administrator to run once:
--
--   psql -v db=crashdesk -v owner=crashdesk_owner -v owner_password='...' \
--        -v app=crashdesk_app -v app_password='...' -f docker/db-roles.sql
--
-- owner: owns the database and every table, runs the migrations (MIGRATE_DATABASE_URL).
-- app:   what the web app connects as (DATABASE_URL); it reads and writes rows and owns nothing,
--        so it cannot alter, drop or disable a table or a trigger, nor grant itself more.
-- The table privileges themselves are granted by `manage.py grant_app_role`, which the
-- container's entrypoint runs as the owner after migrating.

\set ON_ERROR_STOP on

CREATE ROLE :"owner" LOGIN PASSWORD :'owner_password';
CREATE ROLE :"app" LOGIN PASSWORD :'app_password'
    NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS;
CREATE DATABASE :"db" OWNER :"owner";
REVOKE ALL ON DATABASE :"db" FROM PUBLIC;
GRANT CONNECT, TEMPORARY ON DATABASE :"db" TO :"app";

\connect :"db"
-- Only the owner creates objects (PostgreSQL 15 and later already keep PUBLIC out).
ALTER SCHEMA public OWNER TO :"owner";
REVOKE CREATE ON SCHEMA public FROM PUBLIC;
GRANT USAGE ON SCHEMA public TO :"app";
