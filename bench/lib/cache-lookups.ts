/** @module Reading a server's search-cache lookups from its /metrics: the suite, bench:cpu and bench:tail. */

/**
 * The search cache's lookups so far, from /metrics, by result: `hpd_search_cache_lookups_total` (the
 * search cache's own family) when the server has it; else the `hpd_response_cache_lookups_total`
 * series labelled for search, else all of that family (during the realistic runs, search is all the
 * server is asked).
 */
export async function searchCacheLookups(metricsPort: number): Promise<{ hit: number; miss: number }> {
  const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
  const series = [...text.matchAll(/^(hpd_search_cache_lookups_total|hpd_response_cache_lookups_total)\{([^}]*)\}\s+(\S+)$/gm)].map(
    (m) => ({ family: m[1]!, labels: m[2]!, value: Number(m[3]) }),
  );
  const own = series.filter((x) => x.family === 'hpd_search_cache_lookups_total');
  const labelled = series.filter((x) => /search|"\/v1\/health\/plans"/.test(x.labels));
  const use = own.length > 0 ? own : labelled.length > 0 ? labelled : series;
  const sum = (result: string): number => use.filter((x) => x.labels.includes(`result="${result}"`)).reduce((n, x) => n + x.value, 0);
  return { hit: sum('hit'), miss: sum('miss') };
}
