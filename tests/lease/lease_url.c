/* Builds a generator on the lease URL in argv[1] through the C ABI and prints
 * "OK <node> <id>", or "ERROR <status> <message>" (tests/lease/run.py bindings). */
#include <flakeid.h>
#include <inttypes.h>
#include <stdio.h>

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: lease_url URL\n");
    return 64;
  }
  struct flakeid_options o = flakeid_options_default();
  o.lease_url = argv[1];
  struct flakeid_generator *g = NULL;
  flakeid_status s = flakeid_generator_new(&o, &g);
  if (s != FLAKEID_OK) {
    printf("ERROR %d %s\n", (int)s, flakeid_last_error_message());
    return 0;
  }
  uint64_t node = 0, id = 0;
  if (flakeid_generator_node(g, &node) != FLAKEID_OK || flakeid_next_id(g, &id) != FLAKEID_OK) {
    printf("ERROR %s\n", flakeid_last_error_message());
  } else {
    printf("OK %" PRIu64 " %" PRIu64 "\n", node, id);
  }
  flakeid_generator_free(g);
  return 0;
}
