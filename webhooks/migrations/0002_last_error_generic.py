"""A delivery's `last_error` is read by the project's leads: the receiver's own words (a
reply's excerpt, an error naming an internal host) kept by earlier versions become the class
of failure that sending.py now keeps."""

from django.db import migrations

ANSWERED_ERROR = "the receiver answered with an error"
REDIRECTED = "the receiver answered with a redirect (not followed)"
UNREACHABLE = "the receiver could not be reached"


def last_errors_generalise(apps, schema_editor):
    Delivery = apps.get_model("webhooks", "Delivery")
    rows = Delivery.objects.filter(last_error__startswith="HTTP ")
    rows.filter(last_status_code__gte=300, last_status_code__lt=400).update(last_error=REDIRECTED)
    rows.update(last_error=ANSWERED_ERROR)
    Delivery.objects.filter(last_error__startswith="not delivered:").update(last_error=UNREACHABLE)


class Migration(migrations.Migration):
    dependencies = [("webhooks", "0001_initial")]

    operations = [migrations.RunPython(last_errors_generalise, migrations.RunPython.noop)]
