// SPDX-License-Identifier: MIT
/* Selection of the API calls that are marked; see apis.h. */
#include <ctype.h>
#include <errno.h>
#include <string.h>

#include "apis.h"

int xpu_apis__parse(struct xpu_apis *a, const char *spec)
{
	char *s, *tok, *save = NULL;

	memset(a, 0, sizeof(*a));
	if (!spec)
		spec = XPU_CUPTI_APIS_DEFAULT;
	if (strlen(spec) >= sizeof(a->spec))
		return -EINVAL;
	strcpy(a->spec, spec);
	for (s = a->spec; (tok = strtok_r(s, ", \t\n", &save)); s = NULL) {
		size_t len = strlen(tok);

		if (a->n == XPU_APIS_MAX)
			return -EINVAL;
		a->prefix[a->n] = len && tok[len - 1] == '*';
		a->plen[a->n] = len - a->prefix[a->n];
		a->pat[a->n++] = tok;
	}
	return 0;
}

/* Strips trailing "_vNNNN" (digits) and "_ptsz" / "_ptds", in any order
 * ("cuMemcpyHtoDAsync_v2_ptsz", "cudaLaunchKernel_ptsz_v7000"). */
void xpu_apis__normalize(const char *name, char *out, size_t outsz)
{
	size_t len = strlen(name);
	bool changed = true;

	if (!outsz)
		return;
	if (len >= outsz)
		len = outsz - 1;
	memcpy(out, name, len);
	out[len] = '\0';
	while (changed) {
		char *v = strrchr(out, '_');
		const char *d;

		changed = false;
		if (!v || v == out)
			break;
		if (!strcmp(v, "_ptsz") || !strcmp(v, "_ptds")) {
			*v = '\0';
			changed = true;
			continue;
		}
		if (v[1] != 'v' || !v[2])
			break;
		for (d = v + 2; isdigit((unsigned char)*d); d++)
			;
		if (!*d) {
			*v = '\0';
			changed = true;
		}
	}
}

bool xpu_apis__match(const struct xpu_apis *a, const char *cb_name)
{
	char name[256];

	xpu_apis__normalize(cb_name, name, sizeof(name));
	for (int i = 0; i < a->n; i++) {
		if (a->prefix[i] ? !strncmp(name, a->pat[i], a->plen[i])
				 : !strcmp(name, a->pat[i]))
			return true;
	}
	return false;
}

bool xpu_apis__mark_at_exit(const char *cb_name)
{
	static const char *const queries[] = {
		"cudaEventQuery", "cudaStreamQuery", "cuEventQuery", "cuStreamQuery",
	};
	char name[256];

	xpu_apis__normalize(cb_name, name, sizeof(name));
	for (size_t i = 0; i < sizeof(queries) / sizeof(queries[0]); i++)
		if (!strcmp(name, queries[i]))
			return true;
	return false;
}

bool xpu_apis__copies_graph(const char *cb_name)
{
	static const char *const prefixes[] = {
		"cudaGraphInstantiate", "cudaGraphClone", "cudaGraphExecUpdate",
		"cuGraphInstantiate", "cuGraphClone", "cuGraphExecUpdate",
	};
	char name[256];

	xpu_apis__normalize(cb_name, name, sizeof(name));
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (!strncmp(name, prefixes[i], strlen(prefixes[i])))
			return true;
	return false;
}
