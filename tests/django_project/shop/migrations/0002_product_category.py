# Second migration: a column added with a default (the schema editor writes the
# default as a literal through Connection.escape), a data migration and an index.

from django.db import migrations, models


def fill_categories(apps, schema_editor):
    Product = apps.get_model("shop", "Product")
    Product.objects.filter(sku__startswith="BK-").update(category="book's")


def clear_categories(apps, schema_editor):
    Product = apps.get_model("shop", "Product")
    Product.objects.update(category="misc")


class Migration(migrations.Migration):

    dependencies = [("shop", "0001_initial")]

    operations = [
        migrations.AddField(
            model_name="product",
            name="category",
            field=models.CharField(db_default="misc 'general' \\ ü", max_length=50),
        ),
        migrations.RunPython(fill_categories, clear_categories),
        migrations.AddIndex(
            model_name="product",
            index=models.Index(fields=["category", "-price"], name="product_cat_price"),
        ),
    ]
