"""CrashDesk settings, read from the environment (twelve-factor style).

Every value a deployment may change comes from an environment variable; the defaults give a
working local set-up on SQLite with DEBUG on. Production sets DEBUG=false and must then also
set SECRET_KEY and ALLOWED_HOSTS (see the README's operations section).
"""

import os
from pathlib import Path
from urllib.parse import urlsplit

import dj_database_url
from django.core.exceptions import ImproperlyConfigured
from django.utils.csp import CSP

from crashdesk import error_reports
from crashdesk.release import source_digest

BASE_DIR = Path(__file__).resolve().parent.parent


def env_bool(name: str, default: bool) -> bool:
    raw = os.environ.get(name)
    if raw is None:
        return default
    return raw.strip().lower() in {"1", "true", "yes", "on"}


def env_list(name: str, default: str = "") -> list[str]:
    return [item.strip() for item in os.environ.get(name, default).split(",") if item.strip()]


def env_int(name: str, default: int) -> int:
    return int(os.environ.get(name, default))


# --- Core -----------------------------------------------------------------------------------
DEBUG = env_bool("DEBUG", True)

# A fixed development key is acceptable only while DEBUG is on; production must bring its own.
SECRET_KEY = os.environ.get("SECRET_KEY", "")
if not SECRET_KEY:
    if not DEBUG:
        raise ImproperlyConfigured("SECRET_KEY must be set when DEBUG is off.")
    SECRET_KEY = "django-insecure-development-only-key-not-for-production-use-0123456789"

ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", "localhost,127.0.0.1,[::1]" if DEBUG else "")
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    # Dates in words on django-allauth's passkey list.
    "django.contrib.humanize",
    "django_htmx",
    "simple_history",
    "axes",
    "django_tasks_db",
    "pgtrigger",
    # django-allauth for the second factor alone (TOTP, recovery codes, passkeys): people sign
    # in through Django's own form, then prove the second factor (access.second_factor).
    "allauth",
    "allauth.account",
    "allauth.mfa",
    # Single sign-on over OpenID Connect (access.sso), off until OIDC_ISSUER is set.
    "allauth.socialaccount",
    "allauth.socialaccount.providers.openid_connect",
    "settlements",
]

MIDDLEWARE = [
    # First, so that it times and counts every answer, those of the other middleware included.
    "settlements.monitoring.RequestMetricsMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "settlements.middleware.QueryTextMiddleware",
    # Before anything that reads a request body (the CSRF check reads POST forms).
    "settlements.middleware.RequestSizeLimitMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    # After WhiteNoise, so static files keep their long caching; everything else is no-store.
    "settlements.middleware.NoStoreMiddleware",
    "django.middleware.csp.ContentSecurityPolicyMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    # Times on pages in the signed-in user's own zone (kept in the session).
    "settlements.middleware.UserTimeZoneMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    # allauth's, which its sign-in and second-factor pages need (after authentication).
    "allauth.account.middleware.AccountMiddleware",
    # After authentication and htmx: a signed-in user who owes a second factor is sent to set
    # it up or to prove it before any other page (access.second_factor).
    "settlements.access.second_factor.SecondFactorMiddleware",
    "simple_history.middleware.HistoryRequestMiddleware",
    # Last, so that it sees the final outcome of authentication attempts.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "crashdesk.urls"
WSGI_APPLICATION = "crashdesk.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.template.context_processors.csp",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "crashdesk.release.code_release",
            ],
        },
    },
]

# --- Database -------------------------------------------------------------------------------
# SQLite is the embedded default for a quick start; production and CI use PostgreSQL, e.g.
# DATABASE_URL=postgres://postgres@127.0.0.1:5432/crashdesk
# In production the app connects as a role that owns nothing (docker/db-roles.sql); the
# container's entrypoint migrates as the owner, MIGRATE_DATABASE_URL, in a process of its own.
DATABASES = {
    "default": dj_database_url.parse(
        os.environ.get("DATABASE_URL", f"sqlite:///{BASE_DIR / 'db.sqlite3'}"),
        conn_max_age=env_int("DATABASE_CONN_MAX_AGE", 60),
        # Django's CONN_HEALTH_CHECKS: a connection the server dropped since the last request (a
        # restart, an idle timeout) is replaced before the next request uses it.
        conn_health_checks=True,
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # SQLite has one writer at a time. By default a transaction takes the write lock only at
    # its first write, and two that both read first cannot both upgrade: one fails at once
    # with "database is locked" (a 500), whatever the timeout. Taking it at BEGIN makes the
    # second writer wait its turn, up to the timeout (seconds); WAL lets reads, a long ledger
    # download among them, go on without holding writers up.
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        {
            "transaction_mode": "IMMEDIATE",
            "timeout": env_int("SQLITE_TIMEOUT_SECONDS", 20),
            "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
        }
    )
if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
    # Every connection, the web's and the workers', bounds what one stuck process can cost the
    # others. A statement waits at most DATABASE_LOCK_TIMEOUT_MS for a lock, then fails (a
    # request answers an error, a job's batch is rolled back and tried again); a transaction
    # left idle for DATABASE_IDLE_TIMEOUT_MS (a worker frozen, a machine lost) is ended by the
    # server, which frees its locks and its job items for another worker. The idle bound is
    # above the longest pause between two statements of a step (a large prepare's engine run).
    DATABASES["default"].setdefault("OPTIONS", {})["options"] = (
        f"-c lock_timeout={env_int('DATABASE_LOCK_TIMEOUT_MS', 10_000)}"
        f" -c idle_in_transaction_session_timeout={env_int('DATABASE_IDLE_TIMEOUT_MS', 60_000)}"
    )
if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql" and env_bool(
    "DATABASE_PREPARED_STATEMENTS", False
):
    # psycopg prepares a query on the server once it has run prepare_threshold times on a
    # connection, so that later runs skip parsing and planning (1 to 2 ms of PostgreSQL's CPU a
    # page, 4 ms for the history's union); it can only with the parameters bound on the server,
    # which Django's cursors then do. Off by default: PostgreSQL may then settle on a generic
    # plan, which for a search of a 180,000-payout settlement scans without parallel workers
    # (the review searched took 190 ms instead of 85). Never behind a pooler that hands each
    # transaction to another server connection without carrying prepared statements along
    # (PgBouncer in transaction mode, unless 1.21 or later with max_prepared_statements set).
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        {"server_side_binding": True, "prepare_threshold": 5}
    )
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# --- Authentication -------------------------------------------------------------------------
AUTHENTICATION_BACKENDS = [
    # Axes first, so a locked-out client is refused before its password is checked.
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
LOGIN_URL = "login"

# --- Second factor (django-allauth's MFA; settlements/access/second_factor.py) -----------------
# Required of Tournament Managers, auditors and superusers, optional for everyone else. Only
# the MFA pages of allauth are used: sign-in stays Django's form, and nobody signs up.
ACCOUNT_ADAPTER = "settlements.access.second_factor.ClosedAccountAdapter"
ACCOUNT_LOGIN_METHODS = {"username"}
ACCOUNT_SIGNUP_FIELDS = ["username*", "password1*", "password2*"]
ACCOUNT_EMAIL_VERIFICATION = "none"
MFA_SUPPORTED_TYPES = ["totp", "recovery_codes", "webauthn"]
MFA_TOTP_ISSUER = "CrashDesk"
# Passkeys over http for local runs only (the demo on localhost); production is https.
MFA_WEBAUTHN_ALLOW_INSECURE_ORIGIN = DEBUG
MFA_PASSKEY_LOGIN_ENABLED = False
# How recent the last proof of the second factor must be for what moves money (step-up).
STEP_UP_MAX_AGE = env_int("STEP_UP_MAX_AGE_SECONDS", 10 * 60)

# --- Single sign-on (OpenID Connect; settlements/access/sso.py, docs/access.md) ----------------
# Off while OIDC_ISSUER is empty; local passwords always work (a break-glass administrator, the
# demo). Roles follow the provider's groups at every sign-in: OIDC_ROLE_GROUPS maps each group
# to a role ("desk-approvers=tournament_manager,desk-audit=auditor").
OIDC_ISSUER = os.environ.get("OIDC_ISSUER", "").strip()
SSO = {
    "provider_id": "sso",
    "name": os.environ.get("OIDC_NAME", "").strip() or "your organisation's sign-in",
    "groups_claim": os.environ.get("OIDC_GROUPS_CLAIM", "").strip() or "groups",
    "roles": dict(item.split("=", 1) for item in env_list("OIDC_ROLE_GROUPS") if "=" in item),
    # Whether the provider's "amr" claim naming a second factor (RFC 8176) stands in for ours.
    "amr_counts": env_bool("OIDC_AMR_COUNTS_AS_SECOND_FACTOR", False),
    "amr_values": env_list("OIDC_AMR_SECOND_FACTORS", "mfa,otp,hwk,swk,fpt,face,sc"),
}
# Where a sign-on sends the browser (the Content-Security-Policy's form-action lets it go there).
SSO_ORIGINS = ["{0.scheme}://{0.netloc}".format(urlsplit(OIDC_ISSUER))] if OIDC_ISSUER else []
SOCIALACCOUNT_ADAPTER = "settlements.views.sign_on.SignOnAdapter"
SOCIALACCOUNT_AUTO_SIGNUP = True
SOCIALACCOUNT_EMAIL_AUTHENTICATION = False
SOCIALACCOUNT_STORE_TOKENS = False
SOCIALACCOUNT_PROVIDERS = {
    "openid_connect": {
        # Proof Key for Code Exchange: a code taken from another sign-in is worthless here.
        "OAUTH_PKCE_ENABLED": True,
        "APPS": [
            {
                "provider_id": SSO["provider_id"],
                "name": SSO["name"],
                "client_id": os.environ.get("OIDC_CLIENT_ID", "").strip(),
                "secret": os.environ.get("OIDC_CLIENT_SECRET", "").strip(),
                # The ID token's claims are what roles are read from; no userinfo call.
                "settings": {"server_url": OIDC_ISSUER, "fetch_userinfo": False},
            }
        ]
        if OIDC_ISSUER
        else [],
    }
}
# How often the auditor reviews who holds which access (the access review's due date).
ACCESS_REVIEW_DAYS = env_int("ACCESS_REVIEW_DAYS", 90)
LOGIN_REDIRECT_URL = "dashboard"
LOGOUT_REDIRECT_URL = "login"

# Login throttling (settlements/signin.py): lock a username from one address after a few
# failures, and an address after more failures spread over any usernames (password spraying),
# each for a while. The address is the connection's, or X-Forwarded-For's entry written by the
# outermost of TRUSTED_PROXY_COUNT proxies in front of the app; the header is ignored without it.
AXES_FAILURE_LIMIT = env_int("AXES_FAILURE_LIMIT", 5)
AXES_ADDRESS_FAILURE_LIMIT = env_int("AXES_ADDRESS_FAILURE_LIMIT", 20)
AXES_COOLOFF_TIME = env_int("AXES_COOLOFF_MINUTES", 15) / 60  # hours
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"], "ip_address"]
AXES_HANDLER = "settlements.access.signin.SigninThrottleHandler"
AXES_CLIENT_IP_CALLABLE = "settlements.access.signin.client_address"
TRUSTED_PROXY_COUNT = env_int("TRUSTED_PROXY_COUNT", 0)
AXES_RESET_ON_SUCCESS = True
AXES_ENABLED = env_bool("AXES_ENABLED", True)
AXES_VERBOSE = False

# --- Security -------------------------------------------------------------------------------
# Sessions in the database, so that signing out can end them all (access.authentication).
SESSION_ENGINE = "django.contrib.sessions.backends.db"
SESSION_COOKIE_AGE = env_int("SESSION_COOKIE_AGE", 8 * 60 * 60)  # one working shift
SESSION_EXPIRE_AT_BROWSER_CLOSE = True
SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_SECURE = not DEBUG
CSRF_COOKIE_SECURE = not DEBUG
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", not DEBUG)
SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 0 if DEBUG else 31536000)
SECURE_HSTS_INCLUDE_SUBDOMAINS = not DEBUG
SECURE_HSTS_PRELOAD = not DEBUG
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
# Probes (Docker, load balancers) speak plain HTTP to the container; redirecting them would
# report a healthy instance as failing. So does Prometheus, from inside the compose network.
SECURE_REDIRECT_EXEMPT = [r"^healthz$", r"^metrics$"]
# Behind a TLS-terminating proxy that sets X-Forwarded-Proto.
if env_bool("BEHIND_TLS_PROXY", False):
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")

# Strict CSP: scripts only from our own origin or carrying the per-request nonce; no inline
# styles, no eval. htmx is configured (see base template) not to inject its own style tag.
SECURE_CSP = {
    "default-src": [CSP.SELF],
    "script-src": [CSP.SELF, CSP.NONCE],
    "style-src": [CSP.SELF],
    "img-src": [CSP.SELF, "data:"],
    "connect-src": [CSP.SELF],
    # A sign-on posts here, then goes on to the identity provider: its origin too.
    "form-action": [CSP.SELF, *SSO_ORIGINS],
    "frame-ancestors": [CSP.NONE],
    "base-uri": [CSP.NONE],
    "object-src": [CSP.NONE],
}

# --- Uploads and the API --------------------------------------------------------------------
# A 300,000-entrant snapshot is about 10 MB; the default leaves room for larger ones.
SNAPSHOT_MAX_BYTES = env_int("SNAPSHOT_MAX_BYTES", 32 * 1024 * 1024)
DATA_UPLOAD_MAX_MEMORY_SIZE = SNAPSHOT_MAX_BYTES
FILE_UPLOAD_MAX_MEMORY_SIZE = 2_621_440

# Approved lines the cashier has not confirmed after this many hours are listed as overdue.
PAYMENT_CONFIRMATION_HOURS = env_int("PAYMENT_CONFIRMATION_HOURS", 24)

# --- Email ----------------------------------------------------------------------------------
# The digests of what waits for each person (settlements.services.notifications). Run for
# development (the demo), each email goes to the worker's output; in production, to SMTP.
EMAIL_BACKEND_PATH = os.environ.get(
    "EMAIL_BACKEND",
    "django.core.mail.backends.console.EmailBackend"
    if DEBUG
    else "django.core.mail.backends.smtp.EmailBackend",
)
MAILERS = {
    "default": {
        "BACKEND": EMAIL_BACKEND_PATH,
        "OPTIONS": {
            "host": os.environ.get("EMAIL_HOST", "localhost"),
            "port": env_int("EMAIL_PORT", 25),
            "username": os.environ.get("EMAIL_HOST_USER", ""),
            "password": os.environ.get("EMAIL_HOST_PASSWORD", ""),
            "use_tls": env_bool("EMAIL_USE_TLS", False),
            "use_ssl": env_bool("EMAIL_USE_SSL", False),
            "timeout": env_int("EMAIL_TIMEOUT", 20),
        }
        # Only SMTP takes a server's options; the console and file backends refuse them.
        if EMAIL_BACKEND_PATH.endswith("smtp.EmailBackend")
        else {},
    }
}
DEFAULT_FROM_EMAIL = os.environ.get("DEFAULT_FROM_EMAIL", "CrashDesk <crashdesk@localhost>")
# Where the desk is reached, for the links in emails (no request to read the host from).
SITE_URL = os.environ.get("SITE_URL", "http://localhost:8000").rstrip("/")
# A digest that failed to send is tried again this many times, waiting twice as long each time
# from DIGEST_RETRY_SECONDS.
DIGEST_RETRIES = env_int("DIGEST_RETRIES", 5)
DIGEST_RETRY_SECONDS = env_int("DIGEST_RETRY_SECONDS", 60)

# --- Background work ------------------------------------------------------------------------
# Long work (a large prepare, bulk actions, many snapshots) runs as django.tasks tasks stored in
# the database; `manage.py run_worker` runs them, on as many machines as share the database.
# Tests switch to the immediate backend (TASKS_BACKEND=immediate) where a worker is not the point.
TASKS = {
    "default": {
        "BACKEND": (
            "django.tasks.backends.immediate.ImmediateBackend"
            if os.environ.get("TASKS_BACKEND") == "immediate"
            else "django_tasks_db.DatabaseBackend"
        ),
        "QUEUES": ["default"],
    }
}
# A worker leases the items of a job it is about to run for JOB_LEASE_SECONDS; any worker
# takes over the pending items whose lease ran out (their worker killed, frozen, its machine
# lost). A batch still running keeps its items however long it takes: their rows are locked.
JOB_LEASE_SECONDS = env_int("JOB_LEASE_SECONDS", 30)
# An item whose lease was taken this many times without an outcome (each time its worker was
# lost, or the database failed under it) fails with a message that says so.
JOB_ITEM_ATTEMPTS = env_int("JOB_ITEM_ATTEMPTS", 3)
# How long an idle worker waits before looking at the task table again: the delay before a job
# starts. django-tasks-db's second would add up to a second to a prepare that takes two; an
# outage settled in seven jobs waits for a worker seven times. Ten looks a second cost each idle
# worker about 2 % of a core (the Python of each look, 2 ms, more than the database's share).
JOB_POLL_MILLISECONDS = env_int("JOB_POLL_MILLISECONDS", 100)
# How often `manage.py seal_loose_versions --repeat` seals the history versions written outside
# the services (settlements.loose_versions): at most this long, such a version is sealed by no
# event, and verify_audit names it.
HISTORY_SWEEP_SECONDS = env_int("HISTORY_SWEEP_SECONDS", 3600)
# Each job is queued as this many tasks (at most one per item), so that as many workers share
# its items; on a machine of N cores, N workers running one bulk action use them all.
JOB_WORKERS_PER_JOB = env_int("JOB_WORKERS_PER_JOB", 2)
# A worker runs up to this many items of a bulk job in one transaction (each in a savepoint of
# its own), sharing the job's bookkeeping, the commit and the writing of their events; an
# item's outcome shows on the progress page once its batch commits.
JOB_BATCH_ITEMS = env_int("JOB_BATCH_ITEMS", 20)
# The ICM second opinion (settlements.rules.icm): finishing orders sampled for a field too large
# to value exactly, and the site's threshold for flagging a player the policy pays less than
# their stack's ICM value (both conditions: this percentage of that value, this many minor units).
ICM_SAMPLES = env_int("ICM_SAMPLES", 1000)
# How long an API token works unless its issuer says otherwise, and how long the token it
# replaces keeps working after a rotation (services.tokens).
API_TOKEN_DAYS = env_int("API_TOKEN_DAYS", 90)
API_TOKEN_OVERLAP_DAYS = env_int("API_TOKEN_OVERLAP_DAYS", 7)
ICM_FLAG_PERCENT = env_int("ICM_FLAG_PERCENT", 10)
ICM_FLAG_MIN_AMOUNT = env_int("ICM_FLAG_MIN_AMOUNT", 1000)
# A case with more entrants than this is prepared in the background, a smaller one at once.
PREPARE_INLINE_MAX_ENTRANTS = env_int("PREPARE_INLINE_MAX_ENTRANTS", 20_000)
# Bounds of a snapshot archive (zip): how many files, and how large once decompressed.
ARCHIVE_MAX_FILES = env_int("ARCHIVE_MAX_FILES", 1000)
ARCHIVE_MAX_BYTES = env_int("ARCHIVE_MAX_BYTES", 256 * 1024 * 1024)
# As many loose files in one form as an archive may hold: Django's default of 100 refused an
# outage of 200 snapshot files with a bare 400 (before the view, so it cannot explain itself).
DATA_UPLOAD_MAX_NUMBER_FILES = ARCHIVE_MAX_FILES

# --- Crash policy ---------------------------------------------------------------------------
# The site's stage thresholds (percent of entrants knocked out) and late-stage split formula,
# RULES.md §2 and §4. A variable left unset or empty keeps the published default (5, 25,
# chip_equity). The values are checked at start-up by the settlements.E001 system check; each
# case records the policy it was assessed with, so a change only affects cases loaded later.
CRASH_POLICY = {
    key: os.environ[name].strip()
    for key, name in (
        ("pre_pct", "CRASH_POLICY_PRE_PCT"),
        ("early_pct", "CRASH_POLICY_EARLY_PCT"),
        ("late_formula", "CRASH_POLICY_LATE_FORMULA"),
    )
    if os.environ.get(name, "").strip()
}

# --- Internationalisation -------------------------------------------------------------------
LANGUAGE_CODE = "en-us"
# The zone pages show times in for users who have not chosen their own (settings page);
# exports and the API are always in UTC.
TIME_ZONE = os.environ.get("TIME_ZONE", "UTC")
USE_I18N = True
USE_TZ = True

# --- Static files ---------------------------------------------------------------------------
STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = Path(os.environ.get("STATIC_ROOT", BASE_DIR / "staticfiles"))
# WhiteNoise would read DEBUG when its middleware starts, after test runners have switched DEBUG
# off; tie its mode to the configured value so a test run serves files the way development does
# instead of warning that collectstatic never ran.
WHITENOISE_AUTOREFRESH = DEBUG
WHITENOISE_USE_FINDERS = DEBUG
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": (
            "django.contrib.staticfiles.storage.StaticFilesStorage"
            if DEBUG
            else "whitenoise.storage.CompressedManifestStaticFilesStorage"
        )
    },
}

# --- Logging --------------------------------------------------------------------------------
# One JSON object per line on stderr (stdout stays clean for `manage.py settle`), so business
# events can be shipped and searched.
LOG_LEVEL = os.environ.get("LOG_LEVEL", "INFO")
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"json": {"()": "crashdesk.logging.JsonFormatter"}},
    "filters": {"refusals_on_one_line": {"()": "crashdesk.logging.RefusalsOnOneLine"}},
    "handlers": {
        "stderr": {
            "class": "logging.StreamHandler",
            "formatter": "json",
            "filters": ["refusals_on_one_line"],
        }
    },
    "root": {"handlers": ["stderr"], "level": LOG_LEVEL},
    "loggers": {
        # Django's own text handlers (the development server's, the console's under DEBUG)
        # would print every line a second time beside the JSON one: one format, one line.
        "django": {"handlers": ["stderr"], "level": LOG_LEVEL, "propagate": False},
        "django.server": {"handlers": ["stderr"], "level": "INFO", "propagate": False},
        "django.db.backends": {"level": "WARNING"},
        "crashdesk.events": {"level": "INFO", "handlers": ["stderr"], "propagate": False},
    },
}

# --- Cache ----------------------------------------------------------------------------------
# Three caches, by what a miss costs and who must agree on an entry.
# - "default", Django's database cache (its table created by migration 0007): decision
#   previews, which take up to seconds to compute for a 300,000-entrant case, the payout and
#   ICM charts, which rank every payout of a settlement, and the last audit verification;
#   shared by every gunicorn worker and replica, kept across restarts.
# - "pages", Django's in-memory cache, one per process: the pages' rendered fragments ({% cache
#   ... using="pages" %}): what never changes once written (a settlement's crumbs, its pages
#   of payout rows and their chart, an ICM chart), keyed by the record and when it was
#   prepared, so a process can never read one that another's change made stale; a miss costs
#   one page's queries. Kept in memory, a later view reads it without a query (the database
#   cache's read was a tenth of the review's CPU: docs/benchmarks.md).
# - "rows", one per process too: fragments of what does change (a dashboard's incident entry),
#   keyed by PostgreSQL's version of every row they show (settlements.row_stamps), so that any
#   write draws them again. SQLite's rows carry no versions, so it keeps none there.
CACHES = {
    "default": {
        "BACKEND": "django.core.cache.backends.db.DatabaseCache",
        "LOCATION": "crashdesk_cache",
        "OPTIONS": {"MAX_ENTRIES": 10000},
    },
    "pages": {
        "BACKEND": "django.core.cache.backends.locmem.LocMemCache",
        "LOCATION": "crashdesk-pages",
        # A page of 50 payout rows is about 40 kB: at most some 80 MB a process.
        "OPTIONS": {"MAX_ENTRIES": 2000},
    },
    "rows": {
        "BACKEND": "django.core.cache.backends.locmem.LocMemCache"
        if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql"
        else "django.core.cache.backends.dummy.DummyCache",
        "LOCATION": "crashdesk-rows",
        "OPTIONS": {"MAX_ENTRIES": 2000},
    },
}

# The release the cached page fragments are keyed by (crashdesk/release.py): name it, e.g. with
# the image's git revision; unset, it is a digest of the templates and the code, taken at
# start-up (in development, restart the server after editing a template that a page caches).
CODE_RELEASE = os.environ.get("CRASHDESK_RELEASE", "").strip() or source_digest(BASE_DIR)

# --- History --------------------------------------------------------------------------------
SIMPLE_HISTORY_REVERT_DISABLED = True
SIMPLE_HISTORY_HISTORY_CHANGE_REASON_USE_TEXT_FIELD = True

# --- Audit checkpoints -----------------------------------------------------------------------
# Each verification of the event log ends with a checkpoint signed with this key, kept out of
# the database so that a checkpoint altered there is caught (settlements/checkpoints.py). Unset,
# a key derived from SECRET_KEY signs them; `check --deploy` asks for one of its own.
AUDIT_CHECKPOINT_KEY = os.environ.get("AUDIT_CHECKPOINT_KEY", "").strip()
# Keys checkpoints may still be signed with while the key is replaced, comma-separated.
AUDIT_CHECKPOINT_KEY_FALLBACKS = [
    key.strip()
    for key in os.environ.get("AUDIT_CHECKPOINT_KEY_FALLBACKS", "").split(",")
    if key.strip()
]
# Events before the last checkpoint that each verification from it checks again, at random.
AUDIT_CHECKPOINT_SAMPLE = int(os.environ.get("AUDIT_CHECKPOINT_SAMPLE", "200"))

# --- Monitoring -----------------------------------------------------------------------------
# /metrics (Prometheus) answers only a scraper sending this as a bearer token; unset, there is
# no such page (docs/operations.md#metrics).
METRICS_TOKEN = os.environ.get("METRICS_TOKEN", "").strip()

# Errors and a sample of transactions go to Sentry only with SENTRY_DSN set, scrubbed of player
# ids, tokens and amounts (crashdesk/error_reports.py); unset, the SDK is never started.
SENTRY_DSN = os.environ.get("SENTRY_DSN", "").strip()
if SENTRY_DSN:
    error_reports.init(
        dsn=SENTRY_DSN,
        environment=os.environ.get("SENTRY_ENVIRONMENT", "production"),
        release=CODE_RELEASE,
        traces_sample_rate=float(os.environ.get("SENTRY_TRACES_SAMPLE_RATE", "0.05")),
    )
