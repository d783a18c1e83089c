"""A real OpenID Connect provider for the single sign-on tests: django-oauth-toolkit in OIDC
mode, in a Django project of its own, run by tests/sso/conftest.py in a process of its own
(never imported by the desk's tests). Its database is SQLite in the test's temporary folder."""

import os
from pathlib import Path

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

HERE = Path(__file__).resolve().parent
SECRET_KEY = "test-provider-only"  # noqa: S105  (a throwaway provider for tests)
DEBUG = False
ALLOWED_HOSTS = ["127.0.0.1", "localhost"]
ROOT_URLCONF = "tests.sso.provider.urls"
USE_TZ = True
INSTALLED_APPS = [
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "oauth2_provider",
]
MIDDLEWARE = [
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
]
TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [HERE / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {"context_processors": ["django.template.context_processors.request"]},
    }
]
DATABASES = {
    "default": {"ENGINE": "django.db.backends.sqlite3", "NAME": os.environ["SSO_PROVIDER_DB"]}
}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
LOGIN_URL = "/accounts/login/"
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]  # quick; test users only

# A signing key made for each run: the provider publishes its public half at its JWKS address.
_KEY = rsa.generate_private_key(public_exponent=65537, key_size=2048)
OAUTH2_PROVIDER = {
    "OIDC_ENABLED": True,
    "OIDC_RSA_PRIVATE_KEY": _KEY.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ).decode(),
    "OIDC_ISS_ENDPOINT": os.environ.get("SSO_PROVIDER_ISSUER", ""),
    "OAUTH2_VALIDATOR_CLASS": "tests.sso.provider.validator.Validator",
    "SCOPES": {"openid": "Who you are", "profile": "Your name", "email": "Your address"},
    "PKCE_REQUIRED": True,
}
