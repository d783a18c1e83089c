import gc
import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "crashdesk.settings")

application = get_wsgi_application()

# Everything loaded so far (Django, the app, its URLs and models) lives as long as the process.
# Left to the garbage collector, it is traversed at every full collection: a pause of about
# 100 ms every few thousand requests, in whichever request triggers it. Frozen, it is skipped.
gc.freeze()
