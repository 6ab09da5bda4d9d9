"""The JSON endpoints a client reads IDs from, written the documented ways
(docs/frameworks.md): a DRF ModelSerializer (flakeid.django maps FlakeIdField) and
a JsonResponse of model_to_dict rows with FlakeIdJSONEncoder."""

from django.forms.models import model_to_dict
from django.http import HttpRequest, JsonResponse
from django.urls import path
from rest_framework import generics, serializers

from flakeid.django import FlakeIdJSONEncoder
from orders.models import Customer, Order


class OrderSerializer(serializers.ModelSerializer):
    class Meta:
        model = Order
        fields = ["id", "customer", "total", "reference"]


class CustomerSerializer(serializers.ModelSerializer):
    class Meta:
        model = Customer
        fields = ["id", "name", "orders"]


class Orders(generics.ListCreateAPIView):
    queryset = Order.objects.order_by("id")
    serializer_class = OrderSerializer


class Customers(generics.ListAPIView):
    queryset = Customer.objects.order_by("id").prefetch_related("orders")
    serializer_class = CustomerSerializer


def orders_json(request: HttpRequest) -> JsonResponse:
    rows = [model_to_dict(o) for o in Order.objects.order_by("id")]
    return JsonResponse(
        {"orders": rows, "ids": list(Order.objects.order_by("id").values_list("id", flat=True))},
        encoder=FlakeIdJSONEncoder,
    )


urlpatterns = [
    path("orders", Orders.as_view()),
    path("customers", Customers.as_view()),
    path("orders.json", orders_json),
]
