from django.contrib import admin

from orders.models import Customer, Order


@admin.register(Customer)
class CustomerAdmin(admin.ModelAdmin):
    list_display = ["id", "name"]
    readonly_fields = ["id"]


@admin.register(Order)
class OrderAdmin(admin.ModelAdmin):
    list_display = ["id", "customer", "total", "reference"]
    readonly_fields = ["id", "reference"]
