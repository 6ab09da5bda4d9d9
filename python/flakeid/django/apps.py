"""The ``flakeid.django`` app: checks settings.FLAKEID when Django starts, so a
missing or bad node source stops the process at start-up rather than at its first
insert. It takes no node id: under ``gunicorn --preload`` this runs in the master,
and each worker builds its own generator on first use, or as it boots with
flakeid.gunicorn's hook (which builds it from settings.FLAKEID, named here). With
Django REST framework installed, it maps FlakeIdField to a string field in every
ModelSerializer (flakeid.django.rest)."""

from __future__ import annotations

import importlib.util

from django.apps import AppConfig


class FlakeIdConfig(AppConfig):
    name = "flakeid.django"
    label = "flakeid"
    verbose_name = "flakeid"

    def ready(self) -> None:
        from django.conf import settings

        from flakeid import _shared
        from flakeid.django import _database, generator

        _shared.check(getattr(settings, "FLAKEID", None) or {}, _database)
        _shared.built_by(generator)
        if importlib.util.find_spec("rest_framework") is None:
            return
        from flakeid.django import rest

        rest.install()
