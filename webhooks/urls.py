from django.urls import path

from webhooks import views

urlpatterns = [
    path("projects/<slug:slug>/settings/webhooks/", views.webhooks_page, name="project-webhooks"),
    path(
        "projects/<slug:slug>/settings/webhooks/<int:subscription_id>/remove/",
        views.subscription_remove,
        name="webhook-subscription-remove",
    ),
    path(
        "projects/<slug:slug>/settings/webhooks/deliveries/<int:delivery_id>/resend/",
        views.delivery_resend_view,
        name="webhook-delivery-resend",
    ),
]
