/* test_wire.c — the measure protocol's frames (compiler/dist/wire.c): header lines, a
 * round trip through a pipe, a broken frame, end of file and a timeout. */
#include "unit.h"
#include "dist/wire.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void test_header(void) {
  WireText t = {0};
  wire_put(&t, "op", "measure");
  wire_put(&t, "arg", "f 4 2 %d %d", 3, 5);
  wire_put(&t, "arg", "o 4 1 7");
  wire_put(&t, "msg", "two\nlines");
  wire_put(&t, "repeat", "%d", 3);
  char v[64];
  check("wire: a key's value", wire_get(t.s, "op", v, sizeof v) && !strcmp(v, "measure"));
  check("wire: the second of a repeated key",
        wire_get_nth(t.s, "arg", 1, v, sizeof v) && !strcmp(v, "o 4 1 7"));
  check("wire: no third", !wire_get_nth(t.s, "arg", 2, v, sizeof v));
  check("wire: a newline in a value stays on its line",
        wire_get(t.s, "msg", v, sizeof v) && !strcmp(v, "two lines"));
  check("wire: a number, and the default of a missing key",
        wire_num(t.s, "repeat", 0) == 3 && wire_num(t.s, "nothing", -1) == -1);
  check("wire: a key is whole (op is not a prefix match of 'opx')", !wire_get("opx 1\n", "op", v, sizeof v));
  wire_text_free(&t);
}

static void test_frames(void) {
  int p[2];
  if (pipe(p)) return;
  unsigned char pl[1000];
  for (int i = 0; i < 1000; i++) pl[i] = (unsigned char)(i * 7);
  bool w = wire_write(p[1], "op run\nid 4\n", pl, sizeof pl) && wire_write(p[1], "op quit\n", NULL, 0);
  char *h, why[128];
  unsigned char *got;
  uint64_t n;
  int r = wire_read(p[0], 1, &h, &got, &n, why, sizeof why);
  check("wire: a frame round trip (header and payload)",
        w && r == 1 && !strcmp(h, "op run\nid 4\n") && n == 1000 && !memcmp(got, pl, 1000));
  free(h), free(got);
  r = wire_read(p[0], 1, &h, &got, &n, why, sizeof why);
  check("wire: an empty payload", r == 1 && n == 0 && !strcmp(h, "op quit\n"));
  free(h), free(got);
  check("wire: nothing to read is a timeout", wire_read(p[0], 0.05, &h, &got, &n, why, sizeof why) == -1);
  if (write(p[1], "HELLO, I AM A SH", 16) != 16) return; /* one header's worth */
  r = wire_read(p[0], 1, &h, &got, &n, why, sizeof why);
  check("wire: bytes that are no frame are refused with a reason", r == 0 && strstr(why, "not a texc measure frame"));
  unsigned char big[16] = {'T', 'X', 'M', '1', 0xff, 0xff, 0xff, 0xff};
  if (write(p[1], big, 16) != 16) return;
  r = wire_read(p[0], 1, &h, &got, &n, why, sizeof why);
  check("wire: a frame too large is refused", r == 0 && strstr(why, "too large"));
  if (write(p[1], "TXM1\0\0\0\x10", 8) != 8) return; /* cut off mid-frame */
  close(p[1]);
  r = wire_read(p[0], 1, &h, &got, &n, why, sizeof why);
  check("wire: a frame cut off by the end of the stream", r == 0 && strstr(why, "closed"));
  close(p[0]);
}

int main(void) {
  test_header();
  test_frames();
  return failures != 0;
}
