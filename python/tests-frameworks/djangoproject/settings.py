"""A Django project for flakeid.django's tests: FLAKEID_DJANGO_DB picks SQLite
(Django's default) or the fixture's PostgreSQL (FLAKEID_TEST_POSTGRES_URL)."""

import os
from urllib.parse import urlsplit

SECRET_KEY = "flakeid-tests-only"
DEBUG = False
ALLOWED_HOSTS = ["testserver", "127.0.0.1"]
USE_TZ = True
ROOT_URLCONF = "urls"
STATIC_URL = "static/"
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "rest_framework",
    "flakeid.django",
    "orders",
]
MIDDLEWARE = [
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
]
TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ]
        },
    }
]

# test_workers.py serves this project from gunicorn with FLAKEID_DJANGO_LEASE (a
# file:// URL) or FLAKEID_DJANGO_NODE (a number, or "none": no node id, each worker
# takes a free one on the host) in place of the node id below.
if os.environ.get("FLAKEID_DJANGO_LEASE"):
    FLAKEID = {"LEASE": os.environ["FLAKEID_DJANGO_LEASE"], "LAYOUT": "snowflake"}
    if os.environ.get("FLAKEID_DJANGO_LEASE_TTL_MS"):
        FLAKEID["LEASE_TTL_MS"] = int(os.environ["FLAKEID_DJANGO_LEASE_TTL_MS"])
elif os.environ.get("FLAKEID_DJANGO_NODE") == "none":
    FLAKEID = {"LAYOUT": "snowflake"}
else:
    FLAKEID = {"NODE": int(os.environ.get("FLAKEID_DJANGO_NODE", "5")), "LAYOUT": "snowflake"}
SERIALIZATION_MODULES = {"json": "flakeid.django.serializer"}
# orders/api.py's endpoints: JSON in and out, no sessions or browsable API.
REST_FRAMEWORK = {
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_PARSER_CLASSES": ["rest_framework.parsers.JSONParser"],
    "DEFAULT_AUTHENTICATION_CLASSES": [],
    "DEFAULT_PERMISSION_CLASSES": [],
    "UNAUTHENTICATED_USER": None,
}

if os.environ.get("FLAKEID_DJANGO_DB") == "postgres":
    url = urlsplit(os.environ["FLAKEID_TEST_POSTGRES_URL"])
    DATABASES = {
        "default": {
            "ENGINE": "django.db.backends.postgresql",
            "NAME": url.path.lstrip("/"),
            "USER": url.username,
            "PASSWORD": url.password,
            "HOST": url.hostname,
            "PORT": url.port,
        }
    }
else:
    DATABASES = {"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": ":memory:"}}

# A request's error (a worker refused by the host guard) goes to stderr, where
# test_workers.py reads it from gunicorn's log.
LOGGING = {
    "version": 1,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "loggers": {"django.request": {"handlers": ["console"], "level": "ERROR"}},
}
