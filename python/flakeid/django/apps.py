"""The ``flakeid.django`` app: builds the process's generator from settings.FLAKEID
when Django starts, so a missing or bad node source stops the process at start-up
rather than at its first insert."""

from __future__ import annotations

from django.apps import AppConfig


class FlakeIdConfig(AppConfig):
    name = "flakeid.django"
    label = "flakeid"
    verbose_name = "flakeid"

    def ready(self) -> None:
        from flakeid.django import generator

        generator()
