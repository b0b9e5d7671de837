package catalogue

// NearRegistry is the registry block whose host is a near miss of host
// (one or two letters added, dropped or changed: a misspelled image
// name), or nil when host has a block of its own or none is near.
func (c *Catalogue) NearRegistry(host string) *Registry {
	if c.Registry(host) != nil {
		return nil
	}
	var best *Registry
	bestD := 3
	for _, r := range c.Registries {
		if d := editDistance(r.Host, host); d < bestD {
			best, bestD = r, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance of a and b, in bytes.
func editDistance(a, b string) int {
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
