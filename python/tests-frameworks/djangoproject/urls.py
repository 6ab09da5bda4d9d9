import os

from django.contrib import admin
from django.http import HttpRequest, JsonResponse
from django.urls import include, path

from flakeid.django import next_id


def ids(request: HttpRequest) -> JsonResponse:
    """`n` IDs of this worker's generator, as strings (exact through JSON.parse)."""
    n = int(request.GET.get("n", "1"))
    return JsonResponse({"pid": os.getpid(), "ids": [str(next_id()) for _ in range(n)]})


urlpatterns = [path("admin/", admin.site.urls), path("ids", ids), path("api/", include("orders.api"))]
