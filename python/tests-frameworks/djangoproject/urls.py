import os

from django.contrib import admin
from django.http import HttpRequest, JsonResponse
from django.urls import include, path

import flakeid
from flakeid.django import next_id


def ids(request: HttpRequest) -> JsonResponse:
    """`n` IDs of this worker's generator, as strings (exact through JSON.parse)."""
    n = int(request.GET.get("n", "1"))
    return JsonResponse({"pid": os.getpid(), "ids": [str(next_id()) for _ in range(n)]})


def uuids(request: HttpRequest) -> JsonResponse:
    """`n` UUIDv7s of this worker's 128-bit generator (DjangoJSONEncoder writes each as text)."""
    n = int(request.GET.get("n", "1"))
    return JsonResponse({"pid": os.getpid(), "ids": [flakeid.uuid7() for _ in range(n)]})


urlpatterns = [
    path("admin/", admin.site.urls),
    path("ids", ids),
    path("uuids", uuids),
    path("api/", include("orders.api")),
]
