// Package suggest finds the name a person probably meant.
package suggest

import (
	"fmt"
	"strings"
)

// DidYouMean returns ` (did you mean "x"?)` when one candidate is close to
// name: equal ignoring case and underscores, or within a small edit
// distance. Ties go to the alphabetically first candidate, so messages are
// stable.
func DidYouMean(name string, candidates []string) string {
	best, bestDist := "", 3
	norm := normalizeName(name)
	for _, c := range candidates {
		d := Distance(name, c)
		if normalizeName(c) == norm {
			d = 0
		}
		if d > len(c)/2 {
			continue
		}
		if d < bestDist || (d == bestDist && c < best) {
			best, bestDist = c, d
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf(" (did you mean %q?)", best)
}

func normalizeName(s string) string {
	return strings.ToLower(strings.ReplaceAll(strings.ReplaceAll(s, "_", ""), "-", ""))
}

// Distance is the Levenshtein distance over bytes.
func Distance(a, b string) int {
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
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
