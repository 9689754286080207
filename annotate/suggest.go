package annotate

import "strings"

// aliases maps names other schedulers use to the key meaning the same.
var aliases = map[string]string{
	"cron":        keyExpression,
	"expr":        keyExpression,
	"schedule":    keyExpression,
	"spec":        keyExpression,
	"location":    keyTZ,
	"timezone":    keyTZ,
	"time_zone":   keyTZ,
	"zone":        keyTZ,
	"ttl":         keyTimeout,
	"concurrency": keyConcurrent,
	"overlap":     keyConcurrent,
	"retry":       keyRetries,
	"max_retries": keyRetries,
	"maxretries":  keyRetries,
	"max-retries": keyRetries,
	"state":       keyStatus,

	"max_concurrency":    keyMaxRunning,
	"max_concurrent":     keyMaxRunning,
	"global_concurrency": keyMaxRunning,
	"concurrency_limit":  keyMaxRunning,
	"rate_limit":         keyRate,
	"ratelimit":          keyRate,
	"limiter":            keyRate,
	"throttle":           keyRate,
	"prio":               keyPriority,
	"weight":             keyPriority,
}

// suggest returns the known key an unknown key most likely means, or "".
// It takes the key with the smallest edit distance (counting a swap of two
// adjacent letters as one edit), ignoring case, when that distance is at
// most 2 and at most half the longer of the two names, or a common synonym.
func suggest(key string) string {
	if len(key) > 32 {
		return ""
	}
	lower := strings.ToLower(key)
	if k, ok := aliases[lower]; ok {
		return k
	}
	best, bestDist := "", 3
	for _, k := range keys {
		d := editDistance(lower, k)
		if d < bestDist && 2*d <= max(len(lower), len(k)) {
			best, bestDist = k, d
		}
	}
	return best
}

// editDistance is the optimal string alignment distance between a and b,
// counted in bytes: insertions, deletions, substitutions and transpositions
// of adjacent bytes.
func editDistance(a, b string) int {
	// Three rows of the dynamic programming table suffice.
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}
