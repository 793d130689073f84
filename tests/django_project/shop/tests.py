"""The shop app's tests: Django's stock MySQL backend running on mysqlc.

Run by tests/test_django.py with ``manage.py test shop``, once with USE_TZ on
and once with it off.
"""

import datetime
import decimal
import io
import threading
import uuid
import zoneinfo

from django.conf import settings
from django.core.management import call_command
from django.db import DatabaseError, IntegrityError, connection, connections, transaction
from django.db.models import Count, F, ProtectedError, Q, Sum
from django.test import TestCase, TransactionTestCase
from django.utils import timezone

from .models import Customer, Order, OrderLine, Product

BERLIN = zoneinfo.ZoneInfo("Europe/Berlin")


def make_customer(email="ann@example.com", **kw):
    joined = kw.pop("joined", None)
    if joined is None:
        joined = datetime.datetime(2024, 3, 31, 1, 30, 15, 250000)
        if settings.USE_TZ:
            joined = joined.replace(tzinfo=BERLIN)
    return Customer.objects.create(email=email, name=kw.pop("name", "Ann"), joined=joined,
                                   **kw)


def make_product(sku="BK-1", price="9.99", **kw):
    return Product.objects.create(sku=sku, title=kw.pop("title", sku),
                                  price=decimal.Decimal(price), **kw)


class BackendTests(TestCase):
    def test_backend_is_mysql_on_mysqlc(self):
        import MySQLdb
        import mysqlc
        self.assertEqual(connection.vendor, "mysql")
        self.assertIsInstance(connection.connection, mysqlc.Connection)
        self.assertEqual(MySQLdb.version_info[:2], (2, 2))
        self.assertTrue(connection.mysql_is_mariadb or connection.mysql_version >= (8,))
        with connection.cursor() as cursor:
            cursor.execute("SELECT @@SESSION.transaction_isolation"
                           if not connection.mysql_is_mariadb
                           else "SELECT @@SESSION.tx_isolation")
            self.assertEqual(cursor.fetchone()[0], "READ-COMMITTED")   # Django's default
            cursor.execute("SELECT %s, %s", ["it's", 3])
            self.assertEqual(cursor.fetchone(), ("it's", 3))
            # escaped for the session's sql_mode, as mysqlclient writes it (issue 20)
            self.assertIn("'it\\'s'", connection.ops.last_executed_query(cursor, "", ()))

    def test_migrations_applied(self):
        names = connection.introspection.table_names()
        for table in ("shop_customer", "shop_product", "shop_order", "shop_orderline"):
            self.assertIn(table, names)
        with connection.cursor() as cursor:
            desc = {c.name: c for c in
                    connection.introspection.get_table_description(cursor, "shop_product")}
            constraints = connection.introspection.get_constraints(cursor, "shop_orderline")
        self.assertEqual(desc["sku"].internal_size, 32)
        self.assertEqual((desc["price"].precision, desc["price"].scale), (10, 2))
        self.assertIn("product_cat_price", connection.introspection.get_constraints(
            connection.cursor(), "shop_product"))
        self.assertTrue(constraints["one_line_per_product"]["unique"])
        # the column's DEFAULT was written as a literal by Connection.escape()
        product = make_product(sku="X-1")
        product.refresh_from_db()
        self.assertEqual(product.category, "misc 'general' \\ ü")
        with connection.cursor() as cursor:
            cursor.execute("SELECT column_default FROM information_schema.columns "
                           "WHERE table_schema = DATABASE() AND table_name = 'shop_product' "
                           "AND column_name = 'category'")
            default = cursor.fetchone()[0]
        self.assertIn("general", default)

    def test_inspectdb(self):
        out = io.StringIO()
        call_command("inspectdb", "shop_orderline", "shop_product", stdout=out)
        text = out.getvalue()
        self.assertIn("class ShopOrderline(models.Model):", text)
        self.assertIn("models.DecimalField(max_digits=10, decimal_places=2)", text)
        self.assertIn("models.ForeignKey('ShopProduct', models.DO_NOTHING)", text)


class CrudTests(TestCase):
    def test_create_read_update_delete(self):
        ann = make_customer(prefs={"newsletter": True})
        book = make_product(sku="BK-1", price="12.50", stock=3)
        pen = make_product(sku="PN-1", price="1.05", stock=100)
        order = Order.objects.create(customer=ann, note="deliver ☃ after 5pm")
        OrderLine.objects.create(order=order, product=book, quantity=2)
        OrderLine.objects.create(order=order, product=pen, quantity=10)

        order = Order.objects.select_related("customer").get(pk=order.pk)
        self.assertEqual(order.customer.email, "ann@example.com")
        self.assertEqual(order.note, "deliver ☃ after 5pm")
        self.assertEqual(sorted(p.sku for p in order.products.all()), ["BK-1", "PN-1"])
        total = OrderLine.objects.filter(order=order).aggregate(
            total=Sum(F("quantity") * F("product__price")))["total"]
        self.assertEqual(total, decimal.Decimal("35.50"))

        # UPDATE rowcount counts matched rows (CLIENT.FOUND_ROWS): 1 even unchanged
        self.assertEqual(Product.objects.filter(pk=pen.pk).update(stock=100), 1)
        self.assertEqual(Product.objects.filter(stock__lt=50).update(stock=F("stock") + 1), 1)
        book.refresh_from_db()
        self.assertEqual(book.stock, 4)

        counts = dict(Customer.objects.annotate(n=Count("orders")).values_list("email", "n"))
        self.assertEqual(counts, {"ann@example.com": 1})

        with self.assertRaises(ProtectedError):
            book.delete()
        ann.delete()                      # cascades to orders and lines
        self.assertEqual(Order.objects.count(), 0)
        self.assertEqual(OrderLine.objects.count(), 0)
        self.assertEqual(Product.objects.count(), 2)

    def test_get_or_create_and_update_or_create(self):
        product, created = Product.objects.get_or_create(
            sku="G-1", defaults={"title": "g", "price": decimal.Decimal("1.00")})
        self.assertTrue(created)
        product, created = Product.objects.update_or_create(
            sku="G-1", defaults={"price": decimal.Decimal("2.00")})
        self.assertFalse(created)
        self.assertEqual(Product.objects.get(sku="G-1").price, decimal.Decimal("2.00"))

    def test_field_round_trip(self):
        token = uuid.UUID("12345678-1234-5678-1234-567812345678")
        make_customer(token=token, birthday=datetime.date(1970, 1, 1))
        image = bytes(range(256)) * 3
        make_product(sku="T-1", weight=0.1 + 0.2, opens=datetime.time(9, 30, 5, 120000),
                     shelf_life=datetime.timedelta(days=400, microseconds=1), image=image)
        c = Customer.objects.get()
        p = Product.objects.get(sku="T-1")
        self.assertEqual(c.token, token)
        self.assertEqual(c.birthday, datetime.date(1970, 1, 1))
        self.assertEqual(p.weight, 0.1 + 0.2)
        self.assertEqual(p.opens, datetime.time(9, 30, 5, 120000))   # TIME via Django's conv
        self.assertEqual(p.shelf_life, datetime.timedelta(days=400, microseconds=1))
        self.assertEqual(bytes(p.image), image)
        self.assertEqual(Product.objects.filter(opens__gte=datetime.time(9)).count(), 1)

    def test_iterator_and_values(self):
        Product.objects.bulk_create(
            [Product(sku="I-%04d" % i, title="t", price=i) for i in range(2500)])
        skus = [p.sku for p in Product.objects.order_by("sku").iterator(chunk_size=300)]
        self.assertEqual(len(skus), 2500)
        self.assertEqual(skus[:2], ["I-0000", "I-0001"])
        self.assertEqual(list(Product.objects.filter(price__lt=2).order_by("price")
                              .values_list("price", flat=True)),
                         [decimal.Decimal("0.00"), decimal.Decimal("1.00")])

    def test_integrity_errors(self):
        make_customer()
        with self.assertRaises(IntegrityError):
            with transaction.atomic():
                make_customer()                              # duplicate email (1062)
        order = Order.objects.create(customer=Customer.objects.get())
        product = make_product()
        with self.assertRaises(IntegrityError):
            with transaction.atomic():                       # CHECK constraint (4025/3819)
                OrderLine.objects.create(order=order, product=product, quantity=0)
        with self.assertRaises(IntegrityError):
            with transaction.atomic():                       # NOT NULL (1048)
                Product.objects.filter(pk=product.pk).update(price=None)
        self.assertEqual(OrderLine.objects.count(), 0)


class BulkCreateTests(TestCase):
    def test_bulk_create_and_update(self):
        products = Product.objects.bulk_create(
            [Product(sku="B-%04d" % i, title="bulk %d" % i, price=decimal.Decimal(i) / 4,
                     attrs={"i": i}) for i in range(1000)],
            batch_size=400)
        self.assertEqual(Product.objects.count(), 1000)
        if connection.features.can_return_rows_from_bulk_insert:
            self.assertTrue(all(p.pk for p in products))
            for p in products[:10]:
                p.stock = 7
            Product.objects.bulk_update(products[:10], ["stock"])
            self.assertEqual(Product.objects.filter(stock=7).count(), 10)
        self.assertEqual(Product.objects.get(sku="B-0999").price, decimal.Decimal("249.75"))
        self.assertEqual(Product.objects.filter(attrs__i__gte=990).count(), 10)

    def test_bulk_create_ignore_conflicts(self):
        make_product(sku="DUP")
        Product.objects.bulk_create([Product(sku="DUP", title="x", price=1),
                                     Product(sku="NEW", title="y", price=2)],
                                    ignore_conflicts=True)
        self.assertEqual(sorted(Product.objects.values_list("sku", flat=True)),
                         ["DUP", "NEW"])


class JSONFieldTests(TestCase):
    def test_json_queries(self):
        make_product(sku="J-1", attrs={"color": "red", "dims": {"w": 5, "h": 2},
                                       "tags": ["a", "b"], "name": "naïve 🐍"})
        make_product(sku="J-2", attrs={"color": "blue", "dims": {"w": 1}, "tags": []})
        make_product(sku="J-3", attrs=None)
        make_product(sku="J-4", attrs={"color": None})
        q = Product.objects.filter
        self.assertEqual(q(attrs__color="red").get().sku, "J-1")
        self.assertEqual(q(attrs__dims__w__gt=3).get().sku, "J-1")
        self.assertEqual(sorted(q(attrs__has_key="dims").values_list("sku", flat=True)),
                         ["J-1", "J-2"])
        self.assertEqual(q(attrs__contains={"tags": ["a"]}).get().sku, "J-1")
        self.assertEqual(q(attrs__tags__1="b").get().sku, "J-1")
        self.assertEqual(q(attrs__isnull=True).get().sku, "J-3")
        self.assertEqual(q(attrs__color=None).get().sku, "J-4")        # JSON null
        self.assertEqual(q(attrs__color__isnull=True).exclude(attrs__isnull=True)
                         .count(), 0)                                   # key present
        self.assertEqual(Product.objects.get(sku="J-1").attrs["name"], "naïve 🐍")
        c = make_customer()
        self.assertEqual(Customer.objects.get(pk=c.pk).prefs, {})


class DateTimeTests(TestCase):
    """DateTimeField with USE_TZ on (aware values, stored as UTC) and off (naive
    values, stored as given)."""

    def test_round_trip_and_storage(self):
        naive = datetime.datetime(2024, 3, 31, 1, 30, 15, 250000)   # before the DST switch
        value = naive.replace(tzinfo=BERLIN) if settings.USE_TZ else naive
        c = make_customer(joined=value)
        got = Customer.objects.get(pk=c.pk).joined
        self.assertEqual(got, value)
        with connection.cursor() as cursor:
            cursor.execute("SELECT joined FROM shop_customer WHERE id = %s", [c.pk])
            stored = cursor.fetchone()[0]
        if settings.USE_TZ:
            self.assertIsNotNone(got.tzinfo)
            self.assertEqual(stored, datetime.datetime(2024, 3, 31, 0, 30, 15, 250000))
        else:
            self.assertIsNone(got.tzinfo)
            self.assertEqual(stored, naive)

    def test_filters_and_auto_now(self):
        if settings.USE_TZ:
            base = datetime.datetime(2024, 10, 27, 0, 0, tzinfo=datetime.timezone.utc)
        else:
            base = datetime.datetime(2024, 10, 27, 0, 0)
        for i in range(6):
            make_customer(email="c%d@example.com" % i, joined=base + datetime.timedelta(hours=i))
        window = Customer.objects.filter(joined__gte=base + datetime.timedelta(hours=2),
                                         joined__lt=base + datetime.timedelta(hours=4))
        self.assertEqual(window.count(), 2)
        self.assertEqual(Customer.objects.filter(joined__year=2024).count(), 6)
        latest = Customer.objects.latest("joined")
        self.assertEqual(latest.joined, base + datetime.timedelta(hours=5))

        before = timezone.now()
        order = Order.objects.create(customer=latest)
        placed = Order.objects.get(pk=order.pk).placed
        self.assertEqual(placed, order.placed)         # datetime(6): microseconds kept
        self.assertLessEqual(before, placed)
        self.assertEqual(placed.tzinfo is not None, settings.USE_TZ)


class TransactionTests(TransactionTestCase):
    def test_atomic_rollback_and_savepoints(self):
        make_product(sku="KEEP")
        with self.assertRaises(ZeroDivisionError):
            with transaction.atomic():
                make_product(sku="GONE")
                1 / 0
        self.assertFalse(Product.objects.filter(sku="GONE").exists())

        with transaction.atomic():
            make_product(sku="OUTER")
            try:
                with transaction.atomic():               # SAVEPOINT
                    make_product(sku="INNER")
                    raise ValueError
            except ValueError:
                pass
            sid = transaction.savepoint()
            make_product(sku="SP")
            transaction.savepoint_rollback(sid)
        self.assertEqual(sorted(Product.objects.values_list("sku", flat=True)),
                         ["KEEP", "OUTER"])

    def test_select_for_update_in_atomic(self):
        product = make_product(sku="LOCK", stock=10)
        locked = threading.Event()
        release = threading.Event()
        errors = []

        def holder():
            try:
                with transaction.atomic():
                    p = Product.objects.select_for_update().get(pk=product.pk)
                    locked.set()
                    release.wait(10)
                    p.stock -= 1
                    p.save(update_fields=["stock"])
            except Exception as exc:      # reported in the main thread
                errors.append(exc)
                locked.set()
            finally:
                connections.close_all()

        thread = threading.Thread(target=holder)
        thread.start()
        try:
            self.assertTrue(locked.wait(10))
            self.assertEqual(errors, [])
            if connection.features.has_select_for_update_nowait:
                with self.assertRaises(DatabaseError):
                    with transaction.atomic():
                        list(Product.objects.select_for_update(nowait=True)
                             .filter(pk=product.pk))
            if connection.features.has_select_for_update_skip_locked:
                with transaction.atomic():
                    self.assertEqual(list(Product.objects.select_for_update(skip_locked=True)
                                          .filter(pk=product.pk)), [])
        finally:
            release.set()
            thread.join(20)
        self.assertEqual(errors, [])
        with transaction.atomic():                     # the lock is free again
            p = Product.objects.select_for_update().get(pk=product.pk)
            self.assertEqual(p.stock, 9)
            p.stock = F("stock") - 1
            p.save()
        self.assertEqual(Product.objects.get(pk=product.pk).stock, 8)

    def test_select_for_update_needs_a_transaction(self):
        from django.db.transaction import TransactionManagementError
        make_product()
        with self.assertRaises(TransactionManagementError):
            list(Product.objects.select_for_update())

    def test_connection_survives_reconnect(self):
        make_product(sku="R-1")
        connection.close()
        self.assertTrue(Product.objects.filter(sku="R-1").exists())
        self.assertTrue(connection.is_usable())
