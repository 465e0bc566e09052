from django.db import migrations


def leads_leave_the_admin(apps, schema_editor):
    """Leads used to get `is_staff` and a "Leads" group to use the Django admin, whose
    foreign-key fields were not scoped to their projects. The admin is now for superusers
    only: leads work in Arbiter's own pages."""
    Group = apps.get_model("auth", "Group")
    User = apps.get_model("auth", "User")
    group = Group.objects.filter(name="Leads").first()
    if group is None:
        return
    User.objects.filter(groups=group, is_superuser=False).update(is_staff=False)
    group.delete()


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0005_export_job"),
        ("auth", "0012_alter_user_first_name_max_length"),
    ]

    operations = [migrations.RunPython(leads_leave_the_admin, migrations.RunPython.noop)]
