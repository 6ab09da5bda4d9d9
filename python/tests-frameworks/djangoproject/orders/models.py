from django.db import models

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
