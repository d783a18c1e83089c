"""Who may act: the desk's roles, one permission answer per action, signing in (sessions and
their throttle), API tokens' authentication, and the events recorded when someone's access
changes. Services, views, templates and the API all ask here."""
