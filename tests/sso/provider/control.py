"""Set up and change the test provider's database from the tests, in a process of its own:

python -m tests.sso.provider.control setup CLIENT_ID SECRET REDIRECT_URI PASSWORD
python -m tests.sso.provider.control groups USERNAME [GROUP ...]
"""

import os
import sys

import django


def main(command: str, *args: str) -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.sso.provider.settings")
    django.setup()
    from django.contrib.auth.models import Group, User
    from django.core.management import call_command
    from oauth2_provider.models import Application

    if command == "setup":
        client_id, secret, redirect_uri, password = args
        call_command("migrate", verbosity=0)
        Application.objects.create(
            name="CrashDesk",
            client_id=client_id,
            client_secret=secret,
            redirect_uris=redirect_uri,
            client_type=Application.CLIENT_CONFIDENTIAL,
            authorization_grant_type=Application.GRANT_AUTHORIZATION_CODE,
            algorithm=Application.RS256_ALGORITHM,
            skip_authorization=True,
        )
        for username in ("ana", "bo", "cy"):
            User.objects.create_user(username, password=password)
    elif command == "groups":
        username, *names = args
        user = User.objects.get(username=username)
        user.groups.set([Group.objects.get_or_create(name=name)[0] for name in names])
    elif command == "redirect":
        (uri,) = args
        application = Application.objects.get()
        application.redirect_uris = f"{application.redirect_uris} {uri}"
        application.save()
    else:
        raise SystemExit(f"unknown command {command}")


if __name__ == "__main__":
    main(*sys.argv[1:])
