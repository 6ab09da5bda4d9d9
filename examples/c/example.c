/* A first flakeid program in C. Build it against an installed libflakeid:
 *
 *   cc example.c $(pkg-config --cflags --libs flakeid) -Wl,-rpath,<prefix>/lib -o example
 *
 * (the rpath lets the loader find libflakeid.so.0 at run time; or LD_LIBRARY_PATH)
 */
#include <flakeid.h>
#include <inttypes.h>
#include <stdio.h>

int main(void) {
  flakeid_options options = flakeid_options_default(); /* snowflake layout */
  options.datacenter = 1;
  options.worker = 2;

  flakeid_generator *gen = NULL;
  if (flakeid_generator_new(&options, &gen) != FLAKEID_OK) {
    fprintf(stderr, "flakeid: %s\n", flakeid_last_error_message());
    return 1;
  }

  uint64_t id;
  if (flakeid_next_id(gen, &id) != FLAKEID_OK) {
    fprintf(stderr, "flakeid: %s\n", flakeid_last_error_message());
    flakeid_generator_free(gen);
    return 1;
  }

  flakeid_parts parts;
  char text[FLAKEID_MAX_ENCODED_LEN + 1];
  flakeid_decompose(&options.layout, id, &parts);
  flakeid_encode(id, FLAKEID_ENCODING_BASE62, text, sizeof text, NULL);
  printf("id %" PRIu64 " (base62 %s): time %" PRIu64 " ms, datacenter %" PRIu64 ", worker %" PRIu64
         ", sequence %" PRIu64 "\n",
         id, text, parts.timestamp_ms, parts.datacenter, parts.worker, parts.sequence);

  /* Errors name the field and its range. */
  options.worker = 32;
  flakeid_generator *bad = NULL;
  flakeid_status status = flakeid_generator_new(&options, &bad);
  printf("worker 32: %s (%s)\n", flakeid_status_name(status), flakeid_last_error_message());

  flakeid_generator_free(gen);
  return status == FLAKEID_ERR_CONFIG ? 0 : 1;
}
