// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests: the adaptive sampling controller. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "sampler.h"

static struct at_sel_change *ch;
static size_t nch;

static void clear(void)
{
	for (size_t i = 0; i < nch; i++)
		free(ch[i].reason);
	free(ch);
	ch = NULL;
	nch = 0;
}

/* Last change of id with kind what, or NULL. */
static const struct at_sel_change *last(uint32_t id, uint32_t what)
{
	for (size_t i = nch; i-- > 0;)
		if (ch[i].id == id && ch[i].what == what)
			return &ch[i];
	return NULL;
}

static bool starts(const struct at_sel_change *c, const char *prefix)
{
	if (c && strncmp(c->reason, prefix, strlen(prefix)))
		printf("#   reason: %s\n", c->reason);
	return c && !strncmp(c->reason, prefix, strlen(prefix));
}

/* One second of a function: hits calls, sampled at rate, latency mean_ns (sd 10 %). */
static struct at_sampler_in fig(uint32_t id, uint64_t hits, double rate, double mean_ns)
{
	struct at_sampler_in x = {.id = id, .hits = hits, .returns = hits};
	double sd = mean_ns / 10;

	x.sampled = (uint64_t)((double)hits * rate + 0.5);
	x.sum_ns = (uint64_t)((double)hits * mean_ns);
	x.sumsq = (double)hits * (mean_ns * mean_ns + sd * sd);
	return x;
}

static void tick_ref(struct at_sampler *s, uint64_t t, struct at_sampler_in *in, size_t n,
		     struct at_sampler_out *o, bool reference)
{
	struct at_sampler_tick tk = {.now_ns = t * 1000000000ULL,
				     .dt_s = 1,
				     .cpu_ns = 1e9,
				     .reference = reference,
				     .n = n,
				     .in = in};

	for (size_t i = 0; i < n; i++)
		tk.all_hits += in[i].hits;
	at_sampler_tick(s, &tk, o, &ch, &nch);
}

static void tick(struct at_sampler *s, uint64_t t, struct at_sampler_in *in, size_t n,
		 struct at_sampler_out *o)
{
	tick_ref(s, t, in, n, o, false);
}

static struct at_counts ref_counts(uint64_t calls, double mean_ns)
{
	double sd = mean_ns / 10;
	struct at_counts c = {.calls = calls,
			      .returns = calls,
			      .sum_ns = (uint64_t)((double)calls * mean_ns),
			      .sumsq = (double)calls * (mean_ns * mean_ns + sd * sd)};

	return c;
}

static struct at_sampler *new_sampler(double budget, uint64_t max_events)
{
	struct at_sampler_cfg cfg;

	at_sampler_defaults(&cfg);
	cfg.sample_ns = 1000;
	cfg.attach_hit_ns = 0;
	cfg.budget_pct = budget;
	cfg.max_events = max_events;
	return at_sampler_new(&cfg);
}

static void test_budget(void)
{
	struct at_sampler *s = new_sampler(5, 0);
	struct at_sampler_out o;
	struct at_counts ref = ref_counts(1000, 2000);
	struct at_sampler_in in;
	bool rising = true;
	double r;

	check(at_sampler_add(s, 5, false, &ref, 1) == 1.0 && at_sampler_attached(s, 5),
	      "a function with 1000 calls/s starts at rate 1");
	in = fig(5, 1000, 1.0, 2000);
	tick(s, 1, &in, 1, &o);
	check(at_sampler_rate(s, 5) == 1.0 && nch == 0 && fabs(o.detail_pct - 0.1) < 0.001,
	      "under budget at rate 1: no change (detail 0.1 %)");
	/* the load jumps a hundredfold: 100k sampled calls cost 11 % */
	in = fig(5, 100000, 1.0, 2000);
	tick(s, 2, &in, 1, &o);
	r = at_sampler_rate(s, 5);
	check(fabs(o.detail_pct - 11.11) < 0.01 && fabs(r - 0.45) < 1e-6 &&
		  starts(last(5, AT_SEL_RATE),
			 "rate 1 -> 0.45: budget 5 %: detail cost 11.11 % this tick, 45000 "
			 "events/s per function affordable"),
	      "budget exceeded: the rate drops at once to what 5 % affords (0.45)");
	in = fig(5, 100000, r, 2000);
	tick(s, 3, &in, 1, &o);
	check(fabs(o.detail_pct - 4.71) < 0.01 && fabs(at_sampler_rate(s, 5) - 0.4775) < 1e-3,
	      "next tick: the estimate with rate 0.45 is 4.7 %, the rate settles at 0.48");
	/* load back to normal: rates double per tick up to the maximum */
	for (int t = 4; t < 7; t++) {
		double before = at_sampler_rate(s, 5);

		in = fig(5, 1000, before, 2000);
		tick(s, (uint64_t)t, &in, 1, &o);
		if (!(at_sampler_rate(s, 5) > before || before == 1.0))
			rising = false;
	}
	check(rising && at_sampler_rate(s, 5) == 1.0 &&
		  starts(last(5, AT_SEL_RATE), "rate 0.955 -> 1: latency +0.0 %, not worse"),
	      "under budget again: the rate doubles per tick back to 1");
	at_sampler_free(s);
	clear();
}

static void test_strata(void)
{
	struct at_sampler *s = new_sampler(5, 0);
	struct at_sampler_out o;
	struct at_counts hot = ref_counts(1000000, 500), rare = ref_counts(10, 2000000);
	struct at_sampler_in in[2];

	at_sampler_add(s, 1, false, &hot, 1);
	at_sampler_add(s, 2, false, &rare, 1);
	check(at_sampler_rate(s, 1) == 0.001 && at_sampler_rate(s, 2) == 1.0,
	      "start rates: 1000 events/s each at most (hot 0.001, rare 1)");
	for (int t = 1; t <= 10; t++) {
		in[0] = fig(1, 1000000, at_sampler_rate(s, 1), 500);
		in[1] = fig(2, 10, at_sampler_rate(s, 2), 2000000);
		tick(s, (uint64_t)t, in, 2, &o);
	}
	check(at_sampler_rate(s, 2) == 1.0,
	      "stratified: the rare function keeps every call (10/s)");
	check(fabs(at_sampler_rate(s, 1) - 0.0476) < 0.003 && o.detail_pct < 5.01,
	      "the hot function gets the rest of the 5 % (rate 0.048, 47.6k events/s)");
	printf("#   hot rate %.4f, detail %.2f %%, level %.0f\n", at_sampler_rate(s, 1),
	       o.detail_pct, o.level);
	at_sampler_free(s);
	clear();
}

static void test_max_events(void)
{
	struct at_sampler *s = new_sampler(100, 1000);
	struct at_sampler_out o;
	struct at_counts ref = ref_counts(10000, 2000);
	struct at_sampler_in in[2];

	at_sampler_add(s, 1, false, &ref, 1);
	at_sampler_add(s, 2, false, &ref, 1);
	in[0] = fig(1, 10000, at_sampler_rate(s, 1), 2000);
	in[1] = fig(2, 10000, at_sampler_rate(s, 2), 2000);
	tick(s, 1, in, 2, &o);
	check(fabs(at_sampler_rate(s, 1) - 0.05) < 1e-6 &&
		  fabs(at_sampler_rate(s, 2) - 0.05) < 1e-6 &&
		  starts(last(2, AT_SEL_RATE),
			 "rate 0.1 -> 0.05: max-events 1000/s shared by 2 functions"),
	      "--max-events 1000: two functions of 10k calls/s get 500 events/s each");
	at_sampler_free(s);
	clear();
}

static void test_latency(void)
{
	struct at_sampler *s = new_sampler(5, 0);
	struct at_sampler_out o;
	struct at_counts ref = ref_counts(1000, 2000);
	struct at_sampler_in in;
	int asked = 0;

	at_sampler_add(s, 1, false, &ref, 1);
	for (int t = 1; t <= 3; t++) {
		in = fig(1, 1000, at_sampler_rate(s, 1), 2600);
		tick(s, (uint64_t)t, &in, 1, &o);
		asked += o.want_reference;
	}
	check(fabs(at_sampler_rate(s, 1) - 0.343) < 1e-9 &&
		  starts(last(1, AT_SEL_RATE), "rate 0.49 -> 0.343: latency +30.0 % against the "
					       "detail-off reference (Welch p < 1e-4)"),
	      "30 % slower than the reference: the rate falls by 30 % a tick");
	check(asked == 1 && o.want_reference,
	      "after 3 slow ticks the controller asks for a reference");
	in = fig(1, 1000, 0, 2600);
	tick_ref(s, 4, &in, 1, &o, true);
	in = fig(1, 1000, at_sampler_rate(s, 1), 2600);
	tick(s, 5, &in, 1, &o);
	check(fabs(at_sampler_rate(s, 1) - 0.686) < 1e-9,
	      "the reference says 2.6 us is normal now: the rate rises again");
	in = fig(1, 1000, at_sampler_rate(s, 1), 2700);
	tick(s, 6, &in, 1, &o);
	check(at_sampler_rate(s, 1) == 1.0,
	      "3.8 % slower, within the 5 % budget: the rate still rises");
	at_sampler_free(s);
	clear();
}

/* Feed n events of id with latencies 1..2 us * scale and an int argument. */
static void feed(struct at_sampler *s, uint32_t id, int n, double scale)
{
	struct at_event e = {.id = id, .nargs = 1};

	for (int i = 0; i < n; i++) {
		e.duration_ns = (uint64_t)(scale * (1000 + (double)((i * 7919) % 1000)));
		e.args[0].type = AT_ARG_INT;
		e.args[0].v = (uint64_t)(i % 10);
		at_sampler_event(s, &e);
	}
}

static struct at_window_entry entry(uint32_t id, uint64_t fast, uint64_t slow,
				    struct at_hist_pair *h)
{
	struct at_window_entry e = {.id = id, .nhist = 0, .hist = h};

	e.c.calls = e.c.returns = fast + slow;
	e.c.sum_ns = fast * 1500 + slow * 5000000;
	h[0].bucket = at_hist_bucket(1500);
	h[0].count = fast;
	h[1].bucket = at_hist_bucket(5000000);
	h[1].count = slow;
	e.nhist = slow ? 2 : 1;
	return e;
}

static void test_cycles(void)
{
	struct at_sampler *s = new_sampler(100, 0);
	struct at_sampler_out o;
	struct at_counts ref = ref_counts(500, 1500);
	struct at_sampler_in in[2];
	struct at_hist_pair h[2][2];
	struct at_window_entry we[2];
	struct at_window w = {.n = 2, .e = we};
	const struct at_sel_change *c;
	size_t ended = 0, n;

	at_sampler_add(s, 3, false, &ref, 1);
	at_sampler_add(s, 4, true, &ref, 1);
	for (int t = 1; t <= 4; t++) {
		feed(s, 3, 500, 1);
		feed(s, 4, 500, 1);
		in[0] = fig(3, 500, 1, 1500);
		in[1] = fig(4, 500, 1, 1500);
		in[0].sampled = in[1].sampled = 0; /* use the events fed */
		tick(s, (uint64_t)t, in, 2, &o);
		ended += o.cycles_ended;
	}
	c = last(3, AT_SEL_LEAVE);
	check(
	    ended == 4 &&
		starts(c,
		       "profile stationary over 2 cycles, detail parked: stationary: latency KS") &&
		c->ts_ns == 4000000000ULL,
	    "cycles end at the Cochran size (2 s each); stationary after 2 cycles: parked");
	check(!at_sampler_attached(s, 3) && at_sampler_known(s, 3) && at_sampler_rate(s, 3) == 0,
	      "parked: detach, rate 0, still known");
	check(!last(4, AT_SEL_LEAVE) && at_sampler_attached(s, 4),
	      "a forced function is never parked");
	/* drift: the first two windows wholly after parking are the reference */
	we[0] = entry(3, 500, 0, h[0]);
	we[1] = entry(4, 500, 0, h[1]);
	w.start_ns = 3000000000ULL;
	w.end_ns = 4000000000ULL;
	n = at_sampler_window(s, &w, 4000000000ULL, &ch, &nch);
	w.start_ns = 4000000000ULL;
	w.end_ns = 5000000000ULL;
	n += at_sampler_window(s, &w, 5000000000ULL, &ch, &nch);
	w.start_ns = 5000000000ULL;
	w.end_ns = 6000000000ULL;
	n += at_sampler_window(s, &w, 6000000000ULL, &ch, &nch);
	check(n == 0 && !at_sampler_attached(s, 3), "steady windows after parking: no drift");
	/* one drifted window (a stall), then a steady one, then two drifted */
	for (int k = 0; k < 4; k++) {
		we[0] = k == 1 ? entry(3, 500, 0, h[0]) : entry(3, 300, 200, h[0]);
		w.start_ns = (6 + (uint64_t)k) * 1000000000ULL;
		w.end_ns = w.start_ns + 1000000000ULL;
		n = at_sampler_window(s, &w, w.end_ns, &ch, &nch);
		if (k < 3)
			check(n == 0 && !at_sampler_attached(s, 3),
			      k == 0   ? "one drifted window: still parked"
			      : k == 1 ? "a steady window: still parked"
				       : "drifted again, once in a row: still parked");
	}
	c = last(3, AT_SEL_ENTER);
	check(n == 1 && at_sampler_attached(s, 3) && at_sampler_rate(s, 3) > 0 &&
		  starts(c, "back to detail: latency drifted: chi2") && c->rate > 0,
	      "40 % of calls take 5 ms two windows in a row: drift brings the function back");
	printf("#   %s\n", c ? c->reason : "-");
	at_sampler_remove(s, 3);
	check(!at_sampler_known(s, 3), "remove forgets the function");
	at_sampler_free(s);
	clear();
}

/*
 * Thesis Table 4.2: the filter selected ClinicService.findVets() only; at a
 * 50 % rate half of its calls are traced and no other call is. The draw is
 * the BPF side's: a uniform u32 below the rate's threshold.
 */
static void test_table_4_2(void)
{
	static const char *seq[] = {"newVisit", "findAll",     "findVets", "findVets",
				    "findVets", "updateOwner", "findAll",  "findVets",
				    "newVisit", "updateOwner", "findVets", "findVets",
				    "findVets", "updateOwner", "findVets", "findAll"};
	uint64_t thr = at_rate_threshold(0.5), x = 88172645463325252ULL;
	unsigned traced = 0, vets = 0;

	for (int rep = 0; rep < 1000; rep++)
		for (int i = 0; i < 16; i++) {
			bool sel = !strcmp(seq[i], "findVets");
			uint32_t u;

			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			u = (uint32_t)(x >> 32);
			if (!sel)
				continue;
			vets++;
			if ((uint64_t)u < thr)
				traced++;
		}
	check(at_rate_threshold(0) == 0 && at_rate_threshold(1) == 1ULL << 32 &&
		  at_rate_threshold(0.5) == 1ULL << 31 && at_rate_threshold(-1) == 0,
	      "rate thresholds: 0 never, 1 always, 0.5 half of the u32 range");
	check(vets == 8000 && fabs((double)traced / vets - 0.5) < 0.02,
	      "Tigris Table 4.2: at 50 %, half of findVets' calls are traced (the others are not "
	      "drawn)");
	printf("#   traced %u of %u findVets calls\n", traced, vets);
}

/* Algorithm 3's second criterion: a sample whose mean disagrees with the population's waits. */
static void test_representative(void)
{
	struct at_sampler *s = new_sampler(100, 0);
	struct at_sampler_out o;
	struct at_counts ref = ref_counts(500, 1500);
	struct at_sampler_in in;
	size_t ended = 0;

	at_sampler_add(s, 6, false, &ref, 1);
	for (int t = 1; t <= 4; t++) {
		feed(s, 6, 500, 2); /* events twice as slow as the coarse figures */
		in = fig(6, 500, 1, 1500);
		in.sampled = 0;
		tick(s, (uint64_t)t, &in, 1, &o);
		ended += o.cycles_ended;
	}
	check(ended == 0, "events biased against the population's latency: the cycle does not end");
	feed(s, 6, 20000, 1); /* mean now 1636 ns, within 10 % of 1500 */
	in = fig(6, 500, 1, 1500);
	in.sampled = 0;
	tick(s, 5, &in, 1, &o);
	check(o.cycles_ended == 1, "once the sample agrees (within 10 %), it ends");
	at_sampler_free(s);
	clear();
}

int main(void)
{
	test_table_4_2();
	test_budget();
	test_strata();
	test_max_events();
	test_latency();
	test_cycles();
	test_representative();
	printf("# %d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
