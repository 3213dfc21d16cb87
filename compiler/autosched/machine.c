/* machine.c — what a measurement was taken on: the CPU model and its ISA (read by the
 * runtime: rt_cpu_name, rt_cpu_isa), the GPU, and texc's version.
 * Written into every record ("machine" object) and `texc bench --json`, read back by
 * `texc records report`. Read from /proc and uname only: no device is initialised here,
 * so it is safe before the tuner forks. */
#include "autosched.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <stdlib.h>
#include <string.h>

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
  r->host = strdup(rt_cpu_name());
  r->isa = strdup(rt_cpu_isa());
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
