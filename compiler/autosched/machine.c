/* machine.c — what a measurement was taken on: the CPU model, its ISA (architecture and
 * the vector extensions that matter to generated code), the GPU, and texc's version.
 * Written into every record ("machine" object) and `texc bench --json`, read back by
 * `texc records report`. Read from /proc and uname only: no device is initialised here,
 * so it is safe before the tuner forks. */
#include "autosched.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

/* The extensions worth naming, as /proc/cpuinfo spells them (x86 "flags", Arm "Features"). */
static const char *const isa_flags[] = {
    "sse4_2", "avx", "avx2", "fma", "f16c", "avx512f", "avx512bw", "avx512vl", "avx512_vnni",
    "avx512_bf16", "avx512_fp16", "amx_tile", "amx_bf16", "amx_int8", "asimd", "asimddp",
    "sve", "sve2", "bf16", "i8mm", NULL};

/* Is WORD one of the space-separated words of LIST? */
static bool has_word(const char *list, const char *word) {
  size_t n = strlen(word);
  for (const char *p = list; (p = strstr(p, word)) != NULL; p += n) {
    bool start = p == list || p[-1] == ' ' || p[-1] == '\t';
    bool end = p[n] == 0 || p[n] == ' ' || p[n] == '\n';
    if (start && end) return true;
  }
  return false;
}

/* The value of the first /proc/cpuinfo line that starts with KEY or KEY2 (NULL: none),
 * into LINE (of N bytes), without leading blanks or the newline; NULL when there is none. */
static char *cpuinfo_value(const char *key, const char *key2, char *line, int n) {
  FILE *f = fopen("/proc/cpuinfo", "r");
  char *v = NULL;
  while (f && !v && fgets(line, n, f)) {
    char *c = strchr(line, ':');
    if (!c || (strncmp(line, key, strlen(key)) && (!key2 || strncmp(line, key2, strlen(key2)))))
      continue;
    v = c + 1 + strspn(c + 1, " \t");
    v[strcspn(v, "\n")] = 0;
  }
  if (f) fclose(f);
  return v;
}

const char *tune_cpu_name(void) {
  static char name[128];
  if (name[0]) return name;
  char line[512];
  const char *v = cpuinfo_value("model name", NULL, line, sizeof line);
  snprintf(name, sizeof name, "%s", v ? v : "unknown");
  return name;
}

const char *tune_isa(void) {
  static char isa[256];
  if (isa[0]) return isa;
  struct utsname u;
  snprintf(isa, sizeof isa, "%s", uname(&u) == 0 ? u.machine : "unknown");
  char line[8192];
  const char *flags = cpuinfo_value("flags", "Features", line, sizeof line);
  for (int i = 0; flags && isa_flags[i]; i++)
    if (has_word(flags, isa_flags[i]) && strlen(isa) + strlen(isa_flags[i]) + 2 < sizeof isa)
      strcat(strcat(isa, " "), isa_flags[i]);
  return isa;
}

const char *tune_gpu_name(void) {
  static char gpu[128];
  static bool asked;
  if (asked) return gpu;
  asked = true;
  const char *root = "/proc/driver/nvidia/gpus";
  DIR *d = opendir(root);
  struct dirent *e;
  while (d && !gpu[0] && (e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.') continue;
    char path[512], line[256];
    snprintf(path, sizeof path, "%s/%s/information", root, e->d_name);
    FILE *f = fopen(path, "r");
    while (f && fgets(line, sizeof line, f)) {
      if (strncmp(line, "Model:", 6)) continue;
      char *m = line + 6 + strspn(line + 6, " \t");
      m[strcspn(m, "\n")] = 0;
      snprintf(gpu, sizeof gpu, "%s", m);
      break;
    }
    if (f) fclose(f);
  }
  if (d) closedir(d);
  return gpu;
}

void rec_set_machine(Record *r) {
  free(r->host); free(r->isa); free(r->gpu);
  r->host = strdup(tune_cpu_name());
  r->isa = strdup(tune_isa());
  r->gpu = strdup(tune_gpu_name());
  if (!r->host || !r->isa || !r->gpu) die("out of memory");
}

cJSON *machine_to_json(cJSON *o, const char *host, const char *isa, const char *gpu) {
  cJSON *m = cJSON_AddObjectToObject(o, "machine");
  cJSON_AddStringToObject(m, "cpu", host ? host : "");
  cJSON_AddStringToObject(m, "isa", isa ? isa : "");
  cJSON_AddStringToObject(m, "gpu", gpu ? gpu : "");
  return m;
}

void rec_machine_to_json(cJSON *o, const Record *r) {
  if (r->host || r->isa || r->gpu) machine_to_json(o, r->host, r->isa, r->gpu);
  if (r->network && r->network[0]) {
    cJSON *n = cJSON_AddObjectToObject(o, "network");
    cJSON_AddStringToObject(n, "name", r->network);
    cJSON_AddNumberToObject(n, "weight", r->weight);
  }
}

/* A string member of O (NULL when O is not an object or the member is not a string),
 * malloc'd. */
static char *jdup(const cJSON *o, const char *name) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);
  if (!cJSON_IsString(v)) return NULL;
  char *s = strdup(v->valuestring);
  if (!s) die("out of memory");
  return s;
}

void rec_machine_from_json(const cJSON *o, Record *r) {
  const cJSON *m = cJSON_GetObjectItemCaseSensitive(o, "machine");
  r->host = jdup(m, "cpu");
  r->isa = jdup(m, "isa");
  r->gpu = jdup(m, "gpu");
  const cJSON *n = cJSON_GetObjectItemCaseSensitive(o, "network");
  const cJSON *w = cJSON_GetObjectItemCaseSensitive(n, "weight");
  r->network = jdup(n, "name");
  r->weight = cJSON_IsNumber(w) && w->valuedouble >= 1 ? (int)w->valuedouble : 1;
}
