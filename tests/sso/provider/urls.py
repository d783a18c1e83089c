from django.contrib.auth import views as auth_views
from django.http import HttpResponse
from django.urls import include, path

urlpatterns = [
    # Chromium asks every site for one; a 404 would show as a console error in the journeys.
    path("favicon.ico", lambda request: HttpResponse(status=204)),
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("o/", include("oauth2_provider.urls", namespace="oauth2_provider")),
]
