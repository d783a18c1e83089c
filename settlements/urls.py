from django.contrib.auth import views as auth_views
from django.urls import path

from settlements.views import cases, dashboard, incidents

urlpatterns = [
    path(
        "accounts/login/",
        auth_views.LoginView.as_view(redirect_authenticated_user=True),
        name="login",
    ),
    # Sign-out is a POST form in the top bar; Django's LogoutView refuses GET.
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("", dashboard.dashboard, name="dashboard"),
    path("incidents/new/", incidents.incident_new, name="incident_new"),
    path(
        "incidents/<int:incident_id>/tournaments/",
        incidents.incident_tournaments,
        name="incident_tournaments",
    ),
    path("incidents/<int:incident_id>/upload/", incidents.incident_upload, name="incident_upload"),
    path("cases/<int:case_id>/", cases.case_detail, name="case_detail"),
    path("cases/<int:case_id>/prepare/", cases.case_prepare, name="case_prepare"),
]
