from django.db import models

import flakeid
from flakeid.django import FlakeIdField


class Customer(models.Model):
    id = FlakeIdField(primary_key=True)
    name = models.CharField(max_length=100)


class Order(models.Model):
    id = FlakeIdField(primary_key=True)
    customer = models.ForeignKey(Customer, on_delete=models.CASCADE, related_name="orders")
    total = models.IntegerField(default=0)
    # A FlakeIdField need not be the key: a public reference, say.
    reference = FlakeIdField(unique=True)


class Document(models.Model):
    # A 128-bit key: Django's own UUIDField, its default flakeid's UUIDv7 (a
    # module-level function, so migrations name it).
    id = models.UUIDField(primary_key=True, default=flakeid.uuid7, editable=False)
    title = models.CharField(max_length=100)
