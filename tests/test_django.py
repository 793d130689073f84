"""Django's stock MySQL backend on mysqlc: a small project in tests/django_project/.

The project's package calls ``mysqlc.install_as_MySQLdb()``, so
``django.db.backends.mysql`` runs on mysqlc unchanged.  Django runs in
subprocesses (``manage.py``), since its settings and its ``MySQLdb`` import are
per process:

* ``migrate`` (forwards, back to zero, forwards again), ``check`` and
  ``showmigrations`` against a fresh database;
* ``manage.py test shop`` -- the app's Django test cases (CRUD, bulk_create,
  JSONField, select_for_update in atomic, DateTimeField, savepoints, ...) --
  once with ``USE_TZ = True`` and once with ``USE_TZ = False``;
* the option-file setup of Django's documentation (``OPTIONS: {"read_default_file":
  ...}``, credentials and database from the file).

The databases are created and dropped with the account that has global
privileges (the test runner creates its own ``<name>_test`` database).
"""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import mysqlc

PROJECT = Path(__file__).resolve().parent / "django_project"
DB_NAME = "mysqlc_django"
TIMEOUT = 300


@pytest.fixture(scope="module")
def django_env(server):
    pytest.importorskip("django")
    kw = server.connect_kwargs(root=True)

    def run_sql(*statements):
        conn = mysqlc.connect(**kw)
        try:
            cur = conn.cursor()
            for sql in statements:
                cur.execute(sql)
        finally:
            conn.close()

    drop = ["DROP DATABASE IF EXISTS `%s`" % DB_NAME,
            "DROP DATABASE IF EXISTS `%s_test`" % DB_NAME]
    run_sql(*drop, "CREATE DATABASE `%s` CHARACTER SET utf8mb4" % DB_NAME)
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PYTEST_", "DJANGO_"))}
    env.update({
        "MYSQLC_DJANGO_HOST": kw["host"], "MYSQLC_DJANGO_PORT": str(kw["port"]),
        "MYSQLC_DJANGO_USER": kw["user"], "MYSQLC_DJANGO_PASSWORD": kw["password"],
        "MYSQLC_DJANGO_NAME": DB_NAME, "PYTHONDONTWRITEBYTECODE": "1",
        # the subprocesses import the same mysqlc as this process
        "PYTHONPATH": os.pathsep.join(filter(None, [
            str(Path(mysqlc.__file__).resolve().parent.parent), env.get("PYTHONPATH")])),
    })
    yield env
    run_sql(*drop)


def manage(env, *args, use_tz=True):
    env = dict(env, MYSQLC_DJANGO_USE_TZ="1" if use_tz else "0")
    proc = subprocess.run([sys.executable, "manage.py", *args], cwd=PROJECT, env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          timeout=TIMEOUT)
    assert proc.returncode == 0, "manage.py %s failed:\n%s" % (" ".join(args), proc.stdout)
    return proc.stdout


def test_migrate_forwards_backwards_and_check(django_env):
    out = manage(django_env, "migrate", "--noinput")
    assert "Applying shop.0001_initial... OK" in out
    assert "Applying shop.0002_product_category... OK" in out
    shown = manage(django_env, "showmigrations", "shop")
    assert "[X] 0001_initial" in shown and "[X] 0002_product_category" in shown
    manage(django_env, "check", "--database", "default")
    sql = manage(django_env, "sqlmigrate", "shop", "0002")
    assert "ADD COLUMN `category` varchar(50) DEFAULT" in sql
    # backwards (drops the index, runs the reverse data migration, drops columns
    # and tables) and forwards again
    out = manage(django_env, "migrate", "shop", "zero", "--noinput")
    assert "Unapplying shop.0001_initial... OK" in out
    out = manage(django_env, "migrate", "--noinput")
    assert "Applying shop.0002_product_category... OK" in out
    manage(django_env, "makemigrations", "shop", "--check", "--dry-run")


@pytest.mark.parametrize("use_tz", [True, False], ids=["USE_TZ", "no_USE_TZ"])
def test_django_app_tests(django_env, use_tz):
    out = manage(django_env, "test", "shop", "--noinput", "-v", "2", use_tz=use_tz)
    ran = re.search(r"^Ran (\d+) tests?", out, re.M)
    assert ran and int(ran.group(1)) >= 15, out
    assert re.search(r"^OK\b", out, re.M), out
    assert "skipped" not in out.split("Ran ")[-1], out     # every Django test ran


def test_read_default_file_setup(django_env, server, tmp_path):
    """Django's documented option-file setup (``OPTIONS: {"read_default_file": ...}``,
    mysite/settings.py with MYSQLC_DJANGO_OPTION_FILE): the credentials and the
    database come from the file's [client] and [mysite] groups."""
    kw = server.connect_kwargs(root=True)
    name = DB_NAME + "_cnf"
    admin = mysqlc.connect(**kw)
    try:
        cur = admin.cursor()
        cur.execute("DROP DATABASE IF EXISTS `%s`" % name)
        cur.execute("CREATE DATABASE `%s` CHARACTER SET utf8mb4" % name)
        cnf = tmp_path / "my.cnf"
        cnf.write_text("[client]\nhost = %s\nport = %d\nuser = %s\npassword = \"%s\"\n"
                       "default-character-set = utf8mb4\n[mysite]\ndatabase = %s\n"
                       % (server.host, server.port, server.user, server.password, name))
        env = dict(django_env, MYSQLC_DJANGO_OPTION_FILE=str(cnf))
        out = manage(env, "migrate", "--noinput")
        assert "Applying shop.0001_initial... OK" in out
        out = manage(env, "shell", "-c",
                     "from django.db import connection\n"
                     "from shop.models import Product\n"
                     "c = connection.cursor()\n"
                     "c.execute('SELECT DATABASE(), CURRENT_USER(), @@character_set_client')\n"
                     "print('session', *c.fetchone())\n"
                     "print('products', Product.objects.count())")
        assert "session %s %s@%% utf8mb4" % (name, server.user) in out
        assert "products 0" in out
        cur.execute("SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = %s "
                    "AND table_name = 'shop_product'", (name,))
        assert cur.fetchone() == (1,)
    finally:
        admin.cursor().execute("DROP DATABASE IF EXISTS `%s`" % name)
        admin.close()
