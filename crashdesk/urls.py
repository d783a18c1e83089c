from django.contrib import admin
from django.urls import include, path

from settlements.views.health import healthz
from settlements.views.metrics import metrics

urlpatterns = [
    path("healthz", healthz, name="healthz"),
    path("metrics", metrics, name="metrics"),
    path("admin/", admin.site.urls),
    path("api/v1/", include("settlements.api.urls")),
    path("", include("settlements.urls")),
]

# API clients get JSON errors; people get the usual pages.
handler404 = "settlements.api.base.page_not_found"
handler500 = "settlements.api.base.server_error"
