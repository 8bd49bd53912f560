// Package editdist measures how far apart two spellings are, for the
// "did you mean" hints of both CLIs and of ponder's unit paths.
package editdist

// Within is the Levenshtein distance of a and b in bytes, or limit when it
// is at least limit: the rows stop as soon as every cell reaches limit, so
// comparing a typo against many long names stays cheap.
func Within(a, b string, limit int) int {
	if d := len(a) - len(b); d >= limit || -d >= limit {
		return limit
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		low := cur[0]
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			low = min(low, cur[j])
		}
		if low >= limit {
			return limit
		}
		prev, cur = cur, prev
	}
	return min(prev[len(b)], limit)
}
