"""flakeid.django under django.test, on SQLite and on PostgreSQL (the same tests;
test_django.py runs them once per database)."""

import json
from io import StringIO

from django.contrib.auth.models import User
from django.core import serializers
from django.core.exceptions import ValidationError
from django.core.management import call_command
from django.test import TestCase

import flakeid
from flakeid.django import FlakeIdField, generator
from orders.models import Customer, Order


class FieldTests(TestCase):
    def test_new_rows_get_ids_from_the_one_generator(self):
        c = Customer.objects.create(name="ada")
        orders = [Order.objects.create(customer=c, total=i) for i in range(5)]
        ids = [o.id for o in orders]
        self.assertEqual(ids, sorted(ids))
        self.assertEqual(len({*ids, *(o.reference for o in orders)}), 10)
        self.assertEqual(flakeid.decompose(c.id).node, 5)  # settings.FLAKEID
        self.assertIs(generator(), generator())
        self.assertEqual(Order.objects.get(pk=ids[2]).total, 2)
        self.assertEqual(Order.objects.filter(id__in=ids[:3]).count(), 3)
        self.assertEqual(c.orders.count(), 5)

    def test_an_id_is_bigint_and_given_ids_are_kept(self):
        c = Customer.objects.create(id=(1 << 63) - 1, name="max")
        self.assertEqual(Customer.objects.get(pk=str(c.id)).name, "max")

    def test_bad_ids_name_the_field_and_range(self):
        field = Customer._meta.get_field("id")
        for bad, code in [(-1, "out_of_range"), (1 << 63, "out_of_range"), ("12x", "invalid"), (1.5, "invalid")]:
            with self.assertRaises(ValidationError) as caught:
                field.to_python(bad)
            self.assertEqual(caught.exception.code, code)
            self.assertIn("id", caught.exception.messages[0])
        self.assertIn("0..=9223372036854775807", ValidationError.__str__(self._err(field, -1)))

    def _err(self, field, value):
        try:
            field.to_python(value)
        except ValidationError as err:
            return err
        raise AssertionError("no error")

    def test_json_serialisation_writes_strings_and_reads_them_back(self):
        c = Customer.objects.create(name="bob")
        o = Order.objects.create(customer=c, total=7)
        text = serializers.serialize("json", [c, o])
        data = json.loads(text)
        self.assertEqual(data[0]["pk"], str(c.id))
        self.assertEqual(data[1]["pk"], str(o.id))
        self.assertEqual(data[1]["fields"]["customer"], str(c.id))
        self.assertEqual(data[1]["fields"]["reference"], str(o.reference))
        Order.objects.all().delete()
        Customer.objects.all().delete()
        for obj in serializers.deserialize("json", text):
            obj.save()
        self.assertEqual(Order.objects.get().customer_id, c.id)

    def test_migrations_are_stable(self):
        out = StringIO()
        call_command("makemigrations", "orders", "--check", "--dry-run", stdout=out)
        name, path, args, kwargs = Order._meta.get_field("reference").deconstruct()
        self.assertEqual((path, kwargs), ("flakeid.django.FlakeIdField", {"unique": True}))


class AdminTests(TestCase):
    def setUp(self):
        self.user = User.objects.create_superuser("admin", "admin@example.com", "pw")
        self.client.force_login(self.user)

    def test_add_change_and_list(self):
        r = self.client.post("/admin/orders/customer/add/", {"name": "carol"})
        self.assertEqual(r.status_code, 302, r.content[:2000])
        c = Customer.objects.get(name="carol")
        self.assertEqual(flakeid.decompose(c.id).node, 5)
        r = self.client.get("/admin/orders/customer/")
        self.assertContains(r, str(c.id))
        r = self.client.get(f"/admin/orders/customer/{c.id}/change/")
        self.assertContains(r, str(c.id))


class SettingsTests(TestCase):
    def test_the_check_refuses_a_missing_node(self):
        from flakeid.django import _check_settings

        with self.settings(FLAKEID={"LAYOUT": "snowflake"}):
            errors = _check_settings()
        self.assertEqual([e.id for e in errors], ["flakeid.E001"])
        self.assertIn("node 0", errors[0].msg)
        with self.settings(FLAKEID={"NODES": 1}):
            self.assertIn("unknown setting 'NODES'", _check_settings()[0].msg)
        self.assertEqual(_check_settings(), [])

    def test_field_defaults(self):
        f = FlakeIdField()
        self.assertFalse(f.editable)
        self.assertEqual(f.deconstruct()[3], {})
