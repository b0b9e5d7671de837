package resolve

import (
	"slices"

	"github.com/pin-tool/pin/lock"
)

// lockedTags are the tags the new entry records (lock.Module.Tags): those
// this run saw name the locked digest, with no request of their own: the
// upstream tag the policy resolved to it (track-upstream), and the tags
// the hosts started the containers that run it from. The pin's tag is not
// one: a pin is read by digest, so nothing says what its tag names today.
func (dc *settled) lockedTags(c choice) []string {
	var tags []string
	if c.source == lock.SourceUpstream && c.img.Tag != "" {
		tags = append(tags, c.img.Tag)
	}
	for _, f := range dc.floors {
		if f.Kind != FloorContainer {
			continue
		}
		if img := f.Observation.Image; img.Digest == c.img.Digest && img.Tag != "" {
			tags = append(tags, img.Tag)
		}
	}
	slices.Sort(tags)
	return slices.Compact(tags)
}
