/* rt_machine.c — what machine this is, as records and reports name it: the CPU model and
 * its ISA (the architecture and the vector extensions that matter to generated code).
 * Read from /proc/cpuinfo and uname only, so it is safe before a fork and builds for a
 * board (texc-measure-server). Only this architecture's cpuinfo keys are read: under
 * qemu-user, /proc/cpuinfo is the host's. */
#include "texrt.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>

#if defined(__x86_64__) || defined(__i386__)
static const char *const model_keys[] = {"model name", NULL};
static const char *const flags_key = "flags";
#else
static const char *const model_keys[] = {"Model", "CPU part", NULL};
static const char *const flags_key = "Features";
#endif

/* The extensions worth naming, as /proc/cpuinfo spells them (x86 "flags", Arm "Features"). */
static const char *const isa_flags[] = {
    "sse4_2", "avx", "avx2", "fma", "f16c", "avx512f", "avx512bw", "avx512vl", "avx512_vnni",
    "avx512_bf16", "avx512_fp16", "amx_tile", "amx_bf16", "amx_int8", "asimd", "asimddp",
    "sve", "sve2", "bf16", "i8mm", NULL};

/* Is WORD one of the blank-separated words of LIST? */
static bool has_word(const char *list, const char *word) {
  size_t n = strlen(word);
  for (const char *p = list; (p = strstr(p, word)) != NULL; p += n) {
    bool start = p == list || p[-1] == ' ' || p[-1] == '\t';
    bool end = p[n] == 0 || p[n] == ' ' || p[n] == '\t' || p[n] == '\n';
    if (start && end) return true;
  }
  return false;
}

/* The value of the first /proc/cpuinfo line that starts with one of KEYS, into LINE (of N
 * bytes), without leading blanks or the newline; NULL when there is none. */
static char *cpuinfo_value(const char *const *keys, char *line, int n) {
  FILE *f = fopen("/proc/cpuinfo", "r");
  char *v = NULL;
  while (f && !v && fgets(line, n, f)) {
    char *c = strchr(line, ':');
    for (int k = 0; c && !v && keys[k]; k++)
      if (strncmp(line, keys[k], strlen(keys[k])) == 0) {
        v = c + 1 + strspn(c + 1, " \t");
        v[strcspn(v, "\n")] = 0;
      }
  }
  if (f) fclose(f);
  return v;
}

static const char *machine_name(void) {
  static struct utsname u;
  if (!u.machine[0] && uname(&u) != 0) snprintf(u.machine, sizeof u.machine, "unknown");
  return u.machine;
}

const char *rt_cpu_name(void) {
  static char name[128];
  if (name[0]) return name;
  char line[512];
  const char *v = cpuinfo_value(model_keys, line, sizeof line);
  snprintf(name, sizeof name, "%s", v && *v ? v : machine_name());
  return name;
}

const char *rt_cpu_isa(void) {
  static char isa[256];
  if (isa[0]) return isa;
  snprintf(isa, sizeof isa, "%s", machine_name());
  char line[8192];
  const char *flags = cpuinfo_value((const char *const[]){flags_key, NULL}, line, sizeof line);
  for (int i = 0; flags && isa_flags[i]; i++)
    if (has_word(flags, isa_flags[i]) && strlen(isa) + strlen(isa_flags[i]) + 2 < sizeof isa)
      strcat(strcat(isa, " "), isa_flags[i]);
  return isa;
}
