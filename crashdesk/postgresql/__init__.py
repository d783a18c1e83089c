"""Django's PostgreSQL backend: a health check without a query, a cursor that prepares."""
