package resolve

import (
	"flag"
	"math/rand/v2"
	"strings"
)

var (
	propertySeed  = flag.Uint64("property.seed", 20261202, "seed of the generated catalogues")
	propertyCases = flag.Int("property.cases", 10000, "number of generated catalogues")
)

// Words the generator draws images from: versions in several variants,
// pre-releases, floating tags, good, epoch and future build dates, labels.
// (The property that knows the truth is internal/testkit/truth's; these words feed
// the resolve ↔ outdated consistency check.)
var genWords = []string{
	"1.22.6", "1.27.3", "1.27.3/2026-09-01", "1.27.3/2026-09-20", "1.27", "1.28.0-rc.1",
	"1.27.3-rootless", "1.30.0-rootless", "v1.27.3", "2.0.0",
	"latest", "latest/2026-08-20", "latest/2026-09-17", "latest/1970-01-01", "latest/2027-05-01",
	"latest+1.27.3", "latest+2.0.0", "-/2026-08-20", "-/2026-09-17", "-/0001-01-01",
}

func pickWord(r *rand.Rand) string { return genWords[r.IntN(len(genWords))] }
func orDash(s []string) string {
	if len(s) == 0 {
		return "-"
	}
	return strings.Join(s, ",")
}
