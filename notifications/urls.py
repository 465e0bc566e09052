from django.urls import path

from notifications import views

urlpatterns = [
    path("notifications/", views.notification_list, name="notifications"),
    path(
        "notifications/<int:notification_id>/read/",
        views.notification_read,
        name="notification-read",
    ),
    path("notifications/read-all/", views.notification_read_all, name="notifications-read-all"),
    path("notifications/settings/", views.notification_settings, name="notification-settings"),
]
