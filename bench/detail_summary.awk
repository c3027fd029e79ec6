# Summary line of one detail configuration against coarse (bench/run.sh):
# per = "cost-ratio slowdown-pct" per round; m, c, b = medians of the
# configuration, coarse and no probes.
# mawk has no asort().
function isort(a, n, i, j, t)
{
	for (i = 2; i <= n; i++)
		for (j = i; j > 1 && a[j - 1] > a[j]; j--) {
			t = a[j]
			a[j] = a[j - 1]
			a[j - 1] = t
		}
}

BEGIN {
	n = split(per, x, "\n")
	k = 0
	for (i = 1; i <= n; i++)
		if (split(x[i], f, " ") == 2) {
			k++
			r[k] = f[1]
			s[k] = f[2]
		}
	isort(r, k)
	isort(s, k)
	mr = k ? (k % 2 ? r[(k + 1) / 2] : (r[k / 2] + r[k / 2 + 1]) / 2) : 0
	ms = k ? (k % 2 ? s[(k + 1) / 2] : (s[k / 2] + s[k / 2 + 1]) / 2) : 0
	printf "%s: cost above no-probes %.2fx coarse's (per-round median %.2fx); slowdown vs coarse %+.1f %% (per-round median %+.1f %%, %d rounds).", d, (m - b) / (c - b), mr, (m - c) / c * 100, ms, k
	if (d == "detail")
		printf " Goal <= 1.3x: %s.", mr <= 1.3 ? "met" : "NOT met"
	if (d == "budget")
		printf " Goal 5 %% +- 2 points: %s.", ms <= 7 ? "met" : "NOT met"
	printf "\n"
}
