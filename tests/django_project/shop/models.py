import uuid

from django.db import models


class Customer(models.Model):
    email = models.EmailField(unique=True)
    name = models.CharField(max_length=100)
    joined = models.DateTimeField()
    birthday = models.DateField(null=True)
    prefs = models.JSONField(default=dict)
    token = models.UUIDField(default=uuid.uuid4)


class Product(models.Model):
    sku = models.CharField(max_length=32, unique=True)
    title = models.CharField(max_length=200)
    price = models.DecimalField(max_digits=10, decimal_places=2)
    stock = models.PositiveIntegerField(default=0)
    weight = models.FloatField(null=True)
    active = models.BooleanField(default=True)
    opens = models.TimeField(null=True)
    shelf_life = models.DurationField(null=True)
    image = models.BinaryField(null=True)
    attrs = models.JSONField(null=True)
    category = models.CharField(max_length=50, db_default="misc 'general' \\ ü")

    class Meta:
        indexes = [models.Index(fields=["category", "-price"], name="product_cat_price")]


class Order(models.Model):
    customer = models.ForeignKey(Customer, on_delete=models.CASCADE, related_name="orders")
    placed = models.DateTimeField(auto_now_add=True)
    note = models.TextField(blank=True)
    products = models.ManyToManyField(Product, through="OrderLine")


class OrderLine(models.Model):
    order = models.ForeignKey(Order, on_delete=models.CASCADE, related_name="lines")
    product = models.ForeignKey(Product, on_delete=models.PROTECT)
    quantity = models.IntegerField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["order", "product"], name="one_line_per_product"),
            models.CheckConstraint(condition=models.Q(quantity__gt=0), name="quantity_positive"),
        ]
