// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Relevance expressions: parser, grouping, evaluator, hysteresis (stub). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "relevance.h"
#include "util.h"

void at_rel_row_fill(struct at_rel_row *r, uint32_t id, const struct at_counts *c,
		     const uint64_t *hist, uint64_t interval_ns, uint64_t all_total_ns)
{
	(void)hist;
	(void)interval_ns;
	(void)all_total_ns;
	memset(r, 0, sizeof(*r));
	r->id = id;
	r->active = c->calls > 0;
}

void at_rel_row_from_entry(struct at_rel_row *r, const struct at_window_entry *e,
			   uint64_t interval_ns, uint64_t all_total_ns)
{
	at_rel_row_fill(r, e->id, &e->c, NULL, interval_ns, all_total_ns);
}

const char *at_rel_metric_name(enum at_rel_metric m)
{
	(void)m;
	return "?";
}

const char *at_rel_criterion_name(enum at_rel_criterion c)
{
	(void)c;
	return "?";
}

const char *at_rel_level_name(enum at_rel_level l)
{
	(void)l;
	return "?";
}

enum at_rel_metric at_rel_criterion_metric(enum at_rel_criterion c)
{
	(void)c;
	return AT_M_NR;
}

char *at_rel_fmt_metric(char *buf, size_t len, enum at_rel_metric m, double v)
{
	(void)m;
	snprintf(buf, len, "%g", v);
	return buf;
}

int at_rel_group(enum at_rel_metric m, const double *v, size_t n, struct at_rel_groups *g)
{
	(void)m;
	(void)v;
	memset(g, 0, sizeof(*g));
	return n ? 0 : -1;
}

enum at_rel_level at_rel_level_of(const struct at_rel_groups *g, double v)
{
	(void)g;
	(void)v;
	return AT_LVL_AVERAGE;
}

int at_lilliefors(const double *v, size_t n, double *d, double *p)
{
	(void)v;
	(void)n;
	*d = NAN;
	*p = NAN;
	return -1;
}

struct at_rel_expr {
	int none;
};

int at_rel_parse(const char *text, struct at_rel_expr **out, char *err, size_t errlen)
{
	*out = at_xcalloc(1, sizeof(**out));
	(*out)->none = !strcmp(text, "none");
	if (errlen)
		err[0] = 0;
	return 0;
}

void at_rel_free(struct at_rel_expr *e)
{
	free(e);
}

bool at_rel_is_none(const struct at_rel_expr *e)
{
	return e->none;
}

char *at_rel_format(const struct at_rel_expr *e, char *buf, size_t len)
{
	snprintf(buf, len, "%s", e->none ? "none" : "?");
	return buf;
}

size_t at_rel_eval(const struct at_rel_expr *e, const struct at_rel_row *rows, size_t n,
		   struct at_rel_result *out, struct at_rel_groups *groups)
{
	(void)e;
	(void)groups;
	for (size_t i = 0; i < n; i++) {
		memset(&out[i], 0, sizeof(out[i]));
		out[i].id = rows[i].id;
	}
	return 0;
}

struct at_rel_track {
	uint32_t enter, leave;
};

struct at_rel_track *at_rel_track_new(uint32_t enter, uint32_t leave)
{
	struct at_rel_track *t = at_xcalloc(1, sizeof(*t));

	t->enter = enter;
	t->leave = leave;
	return t;
}

void at_rel_track_free(struct at_rel_track *t)
{
	free(t);
}

void at_rel_track_force(struct at_rel_track *t, uint32_t id)
{
	(void)t;
	(void)id;
}

bool at_rel_track_member(const struct at_rel_track *t, uint32_t id)
{
	(void)t;
	(void)id;
	return false;
}

bool at_rel_track_forced(const struct at_rel_track *t, uint32_t id)
{
	(void)t;
	(void)id;
	return false;
}

size_t at_rel_track_update(struct at_rel_track *t, const struct at_rel_row *rows,
			   const struct at_rel_result *res, size_t n, uint64_t now_ns,
			   struct at_sel_change **changes, size_t *nchanges)
{
	(void)t;
	(void)rows;
	(void)res;
	(void)n;
	(void)now_ns;
	(void)changes;
	(void)nchanges;
	return 0;
}
