// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The adaptive sampling controller (stub). */
#include <stdlib.h>
#include <string.h>

#include "sampler.h"
#include "util.h"

void at_sampler_defaults(struct at_sampler_cfg *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->min_rate = 0.001;
	cfg->max_rate = 1.0;
	cfg->budget_pct = 5;
	cfg->coarse_hit_ns = 350;
	cfg->attach_hit_ns = 30;
	cfg->sample_ns = 600;
	cfg->up_step = 0.25;
	cfg->alpha = 0.05;
	cfg->margin = 0.05;
	cfg->cycle_max_s = 60;
	cfg->min_cycle_s = 2;
	cfg->min_effect = 0.10;
	cfg->ref_after = 3;
	cfg->seed = 1;
}

struct at_sampler {
	struct at_sampler_cfg cfg;
};

struct at_sampler *at_sampler_new(const struct at_sampler_cfg *cfg)
{
	struct at_sampler *s = at_xcalloc(1, sizeof(*s));

	s->cfg = *cfg;
	return s;
}

void at_sampler_free(struct at_sampler *s)
{
	free(s);
}

double at_sampler_add(struct at_sampler *s, uint32_t id, bool forced, const struct at_counts *ref,
		      double ref_s)
{
	(void)id;
	(void)forced;
	(void)ref;
	(void)ref_s;
	return s->cfg.max_rate;
}

void at_sampler_remove(struct at_sampler *s, uint32_t id)
{
	(void)s;
	(void)id;
}

void at_sampler_set_cost(struct at_sampler *s, uint32_t id, double sample_ns)
{
	(void)s;
	(void)id;
	(void)sample_ns;
}

bool at_sampler_known(const struct at_sampler *s, uint32_t id)
{
	(void)s;
	(void)id;
	return false;
}

bool at_sampler_attached(const struct at_sampler *s, uint32_t id)
{
	(void)s;
	(void)id;
	return false;
}

double at_sampler_rate(const struct at_sampler *s, uint32_t id)
{
	(void)s;
	(void)id;
	return 0;
}

void at_sampler_event(struct at_sampler *s, const struct at_event *ev)
{
	(void)s;
	(void)ev;
}

void at_sampler_dropped(struct at_sampler *s, uint32_t id, uint64_t n)
{
	(void)s;
	(void)id;
	(void)n;
}

size_t at_sampler_tick(struct at_sampler *s, const struct at_sampler_tick *in,
		       struct at_sampler_out *out, struct at_sel_change **changes, size_t *nchanges)
{
	(void)s;
	(void)in;
	(void)changes;
	(void)nchanges;
	if (out)
		memset(out, 0, sizeof(*out));
	return 0;
}

size_t at_sampler_window(struct at_sampler *s, const struct at_window *w, uint64_t now_ns,
			 struct at_sel_change **changes, size_t *nchanges)
{
	(void)s;
	(void)w;
	(void)now_ns;
	(void)changes;
	(void)nchanges;
	return 0;
}
