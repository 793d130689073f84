# The stock MySQL backend (django.db.backends.mysql) imports MySQLdb; this makes
# that import give mysqlc.  It must run before Django loads the backend, i.e.
# before settings are used -- the project package is imported first.
import mysqlc

mysqlc.install_as_MySQLdb()
