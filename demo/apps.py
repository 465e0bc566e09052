from django.apps import AppConfig


class DemoConfig(AppConfig):
    """The demo project (`manage.py demo`): drawn images, believable pairs, the demo users and
    two offline judges. It sits above the product's apps and nothing imports it."""

    name = "demo"
