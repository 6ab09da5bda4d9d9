"""The WSGI entry point gunicorn serves in test_workers.py."""

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "settings")
application = get_wsgi_application()
# The line test_workers.py waits for, one per process that loaded the app.
print(f"test app loaded in pid {os.getpid()}", flush=True)

if os.environ.get("FLAKEID_TEST_UUID_AT_IMPORT"):
    # With --preload the master makes a UUID before it forks the workers: each
    # worker goes on from the generator it inherited, with random bits of its own.
    import flakeid

    flakeid.uuid7()
