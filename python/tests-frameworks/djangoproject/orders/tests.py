"""flakeid.django under django.test, on SQLite and on PostgreSQL (the same tests;
test_django.py runs them once per database)."""

import json
import subprocess
import sys
import urllib.request
from io import StringIO
from pathlib import Path

from django.contrib.auth.models import User
from django.core import serializers
from django.core.exceptions import ValidationError
from django.core.management import call_command
from django.forms.models import model_to_dict
from django.test import LiveServerTestCase, TestCase

import flakeid
from flakeid.django import FlakeId, FlakeIdField, FlakeIdJSONEncoder, generator
from orders.models import Customer, Document, Order


def _node() -> int:
    """settings.FLAKEID's node id, or the one its lease holds (test_django.py runs this
    suite with "LEASE": "database" too)."""
    from django.conf import settings

    return settings.FLAKEID.get("NODE", generator().node)


sys.path.insert(0, str(Path(__file__).resolve().parents[4] / "tests" / "env"))
import testenv  # noqa: E402  (the one fixture: free_port)

# What a JavaScript client sees: the body through a plain JSON.parse, every number
# then written back as JavaScript prints it (an ID past 2^53 comes out rounded).
JS_READ = (
    "const d = JSON.parse(require('fs').readFileSync(0, 'utf8'));"
    "process.stdout.write(JSON.stringify(d, (k, v) => typeof v === 'number' ? String(v) : v))"
)


def js_read(body: bytes):
    r = subprocess.run(
        ["node", "-e", JS_READ], input=body, capture_output=True, timeout=60, check=True
    )
    return json.loads(r.stdout)


class FieldTests(TestCase):
    def test_new_rows_get_ids_from_the_one_generator(self):
        c = Customer.objects.create(name="ada")
        orders = [Order.objects.create(customer=c, total=i) for i in range(5)]
        ids = [o.id for o in orders]
        self.assertEqual(ids, sorted(ids))
        self.assertEqual(len({*ids, *(o.reference for o in orders)}), 10)
        self.assertEqual(flakeid.decompose(c.id).node, _node())  # settings.FLAKEID
        self.assertIs(generator(), generator())
        self.assertEqual(Order.objects.get(pk=ids[2]).total, 2)
        self.assertEqual(Order.objects.filter(id__in=ids[:3]).count(), 3)
        self.assertEqual(c.orders.count(), 5)

    def test_an_id_is_bigint_and_given_ids_are_kept(self):
        c = Customer.objects.create(id=(1 << 63) - 1, name="max")
        self.assertEqual(Customer.objects.get(pk=str(c.id)).name, "max")

    def test_a_64_bit_layouts_ids_fill_the_bigint(self):
        # settings.FLAKEID's layout decides the range, and a signed BIGINT holds an
        # ID's 64 bits as they are: `flake`'s IDs from 2^63 on are negative there.
        from django.db import connection

        with self.settings(FLAKEID={"NODE": 5, "LAYOUT": "flake"}):
            for pk in ((1 << 64) - 1, 1 << 63, 7):
                Customer.objects.create(id=pk, name=str(pk))
            self.assertEqual(Customer.objects.get(pk=(1 << 64) - 1).name, str((1 << 64) - 1))
            self.assertEqual(
                sorted(Customer.objects.values_list("id", flat=True)), [7, 1 << 63, (1 << 64) - 1]
            )
            with connection.cursor() as cur:
                cur.execute("SELECT id FROM orders_customer WHERE name = %s", [str((1 << 64) - 1)])
                self.assertEqual(cur.fetchone()[0], -1)
        with self.assertRaises(ValidationError):  # snowflake's IDs end at 2^63 - 1
            Customer._meta.get_field("id").to_python(1 << 63)

    def test_bad_ids_name_the_field_and_range(self):
        field = Customer._meta.get_field("id")
        # One code, "invalid": the engine's ParseError says which rule (range or form) in the
        # message.
        for bad, code in [
            (-1, "invalid"),
            (1 << 63, "invalid"),
            ("12x", "invalid"),
            (1.5, "invalid"),
        ]:
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
        self.assertEqual(flakeid.decompose(c.id).node, _node())
        r = self.client.get("/admin/orders/customer/")
        self.assertContains(r, str(c.id))
        r = self.client.get(f"/admin/orders/customer/{c.id}/change/")
        self.assertContains(r, str(c.id))


class SettingsTests(TestCase):
    def test_the_check_refuses_a_missing_node_only_when_required(self):
        from flakeid.django import _check_settings

        # No node id: each process takes a free one on the host.
        with self.settings(FLAKEID={"LAYOUT": "snowflake"}):
            self.assertEqual(_check_settings(), [])
        with self.settings(FLAKEID={"LAYOUT": "snowflake", "REQUIRE_NODE": True}):
            errors = _check_settings()
        self.assertEqual([e.id for e in errors], ["flakeid.E001"])
        self.assertIn("no node id given", errors[0].msg)
        with self.settings(FLAKEID={"NODES": 1}):
            self.assertIn('unknown setting "NODES"', _check_settings()[0].msg)
        self.assertEqual(_check_settings(), [])

    def test_field_defaults(self):
        f = FlakeIdField()
        self.assertTrue(f.editable)  # model_to_dict keeps it
        self.assertIsNone(f.formfield())  # a ModelForm never offers it (as an AutoField)
        self.assertEqual(f.deconstruct()[3], {})


class JsonTests(TestCase):
    def test_ids_from_the_field_are_flakeids_and_the_encoder_writes_them_as_strings(self):
        c = Customer.objects.create(name="dan")
        o = Order.objects.create(customer=c, total=1)
        o = Order.objects.get(pk=o.pk)
        self.assertIs(type(o.id), FlakeId)
        self.assertIs(type(o.customer_id), FlakeId)
        self.assertIs(type(Order.objects.values_list("reference", flat=True).get()), FlakeId)
        row = model_to_dict(o)
        self.assertEqual(set(row), {"id", "customer", "total", "reference"})
        text = json.dumps({"rows": [row], "pair": (o.id, 2**60), "n": 7}, cls=FlakeIdJSONEncoder)
        data = json.loads(text)
        self.assertEqual(data["rows"][0]["id"], str(o.id))
        self.assertEqual(data["rows"][0]["customer"], str(c.id))
        self.assertEqual(data["pair"], [str(o.id), 2**60])  # a plain int is not known to be an ID
        self.assertEqual(data["n"], 7)


class JsonWireTests(LiveServerTestCase):
    """A real server (Django's live server, on a port of the fixture) and a plain
    JSON.parse client (node): every ID read back exactly, from DRF's ModelSerializer
    and from JsonResponse with FlakeIdJSONEncoder; DRF reads strings and numbers."""

    @classmethod
    def setUpClass(cls):
        cls.port = testenv.free_port()
        super().setUpClass()

    def get(self, path):
        with urllib.request.urlopen(self.live_server_url + path, timeout=30) as r:
            body = r.read()
        return json.loads(body), js_read(body)

    def post(self, path, data):
        req = urllib.request.Request(
            self.live_server_url + path,
            data=json.dumps(data).encode(),
            headers={"Content-Type": "application/json"},
            method="POST",
        )
        with urllib.request.urlopen(req, timeout=30) as r:
            return js_read(r.read())

    def test_every_id_is_read_exactly(self):
        customers = [Customer.objects.create(name=f"c{i}") for i in range(3)]
        for i in range(60):
            Order.objects.create(customer=customers[i % 3], total=i)
        orders = list(Order.objects.order_by("id"))
        self.assertTrue(all(o.id > 2**53 for o in orders))
        want = [
            {"id": str(o.id), "customer": str(o.customer_id), "reference": str(o.reference)}
            for o in orders
        ]

        def wrong(rows):  # IDs read wrong (id, customer, reference of each row)
            self.assertEqual(len(rows), len(want))
            return sum(r[k] != w[k] for r, w in zip(rows, want) for k in w)

        _, drf = self.get("/api/orders")
        self.assertEqual(
            wrong(drf), 0, f"DRF ModelSerializer: {wrong(drf)} of {3 * len(want)} IDs read wrong"
        )
        _, plain = self.get("/api/orders.json")
        self.assertEqual(
            wrong(plain["orders"]),
            0,
            f"JsonResponse: {wrong(plain['orders'])} of {3 * len(want)} IDs read wrong",
        )
        self.assertEqual(plain["ids"], [w["id"] for w in want])
        _, cs = self.get("/api/customers")
        self.assertEqual(
            [c["id"] for c in cs], [str(c.id) for c in sorted(customers, key=lambda c: c.id)]
        )
        for c in cs:
            self.assertEqual(
                sorted(c["orders"]), sorted(w["id"] for w in want if w["customer"] == c["id"])
            )

        # DRF reads an ID as a string or a number; the key is read-only.
        ref = 2**60 + 12345
        made = self.post(
            "/api/orders",
            {"id": "1", "customer": str(customers[0].id), "total": 1, "reference": str(ref)},
        )
        self.assertEqual((made["customer"], made["reference"]), (str(customers[0].id), str(ref)))
        self.assertNotEqual(made["id"], "1")
        made = self.post(
            "/api/orders", {"customer": customers[1].id, "total": 2, "reference": ref + 1}
        )
        self.assertEqual(
            (made["customer"], made["reference"]), (str(customers[1].id), str(ref + 1))
        )
        self.assertEqual(Order.objects.get(pk=int(made["id"])).reference, ref + 1)


class UuidTests(LiveServerTestCase):
    """Django's own UUIDField with ``default=flakeid.uuid7``: RFC 9562 UUIDv7 keys,
    increasing in insertion order, stored as the database's uuid (PostgreSQL) or
    text (SQLite) and read back equal; on the JSON wire as text, exact through a
    plain JSON.parse."""

    @classmethod
    def setUpClass(cls):
        cls.port = testenv.free_port()
        super().setUpClass()

    def test_uuid7_keys_round_trip_and_increase(self):
        made = [Document.objects.create(title=f"d{i}") for i in range(200)]
        self.assertTrue(all(d.id.version == 7 for d in made))
        self.assertEqual([d.id for d in made], sorted(d.id for d in made))
        back = list(Document.objects.order_by("id").values_list("id", flat=True))
        self.assertEqual(back, [d.id for d in made])
        with urllib.request.urlopen(self.live_server_url + "/uuids?n=50", timeout=30) as r:
            body = r.read()
        ids = js_read(body)["ids"]
        self.assertEqual(len(set(ids)), 50)
        self.assertTrue(all(flakeid.uuid7_timestamp_ms(i) > 0 for i in ids))
