"""Settings of the mysqlc test project.

The database comes from the environment (set by tests/test_django.py):
MYSQLC_DJANGO_HOST, _PORT, _USER, _PASSWORD, _NAME (the database ``migrate``
works on; the test runner creates ``<NAME>_test`` next to it) and
MYSQLC_DJANGO_USE_TZ ("1" or "0").  With MYSQLC_DJANGO_OPTION_FILE the
connection comes from that option file instead (see below).
"""

import os

BASE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SECRET_KEY = "mysqlc-test-project-not-secret"
DEBUG = False
ALLOWED_HOSTS = []

INSTALLED_APPS = [
    "django.contrib.contenttypes",
    "django.contrib.auth",
    "shop",
]

_env = os.environ.get
DATABASES = {
    "default": {
        "ENGINE": "django.db.backends.mysql",          # the stock backend, on mysqlc
        "HOST": _env("MYSQLC_DJANGO_HOST", "127.0.0.1"),
        "PORT": _env("MYSQLC_DJANGO_PORT", "3306"),
        "USER": _env("MYSQLC_DJANGO_USER", "root"),
        "PASSWORD": _env("MYSQLC_DJANGO_PASSWORD", ""),
        "NAME": _env("MYSQLC_DJANGO_NAME", "mysqlc_django"),
        "OPTIONS": {"charset": "utf8mb4"},
        "TEST": {"NAME": _env("MYSQLC_DJANGO_NAME", "mysqlc_django") + "_test",
                 "CHARSET": "utf8mb4"},
    }
}

# The option-file setup of Django's documentation ("Connecting to the database":
# OPTIONS read_default_file), used when MYSQLC_DJANGO_OPTION_FILE names a file: the
# credentials and the database come from its [client] and [mysite] groups, none of
# them from this file (HOST, PORT, USER, PASSWORD and NAME empty: explicit values
# would win over the file's).
if _env("MYSQLC_DJANGO_OPTION_FILE"):
    DATABASES = {
        "default": {
            "ENGINE": "django.db.backends.mysql",
            "NAME": "", "USER": "", "PASSWORD": "", "HOST": "", "PORT": "",
            "OPTIONS": {"read_default_file": _env("MYSQLC_DJANGO_OPTION_FILE"),
                        "read_default_group": "mysite"},
        }
    }

USE_TZ = _env("MYSQLC_DJANGO_USE_TZ", "1") == "1"
TIME_ZONE = "Europe/Berlin"      # not UTC, so that conversions are visible
USE_I18N = False
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
