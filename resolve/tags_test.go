package resolve

import (
	"context"
	"slices"
	"testing"
)

// TestLockedTags: the entry records the tags this run saw name the locked
// digest: the upstream tag resolved, the hosts' tags for it; never the
// pin's tag (read by digest), never a tag of another image.
func TestLockedTags(t *testing.T) {
	for _, tc := range []struct {
		name                                 string
		policy, pin, running, upstream, opts string
		want                                 []string
	}{
		{"upstream wins", "track-upstream", "-", "1.22.6", "1.22.6,1.27.3", "-", []string{"1.27.3"}},
		{"upstream wins, a host runs it", "track-upstream", "-", "1.27.3,1.22.6", "1.22.6,1.27.3", "-", []string{"1.27.3"}},
		{"running wins", "at-least-running", "1.22.6", "1.27.3", "-", "-", []string{"1.27.3"}},
		{"the pin wins", "at-least-running", "1.27.3", "1.22.6", "-", "-", nil},
		{"the pin, run by a host", "exact", "1.27.3", "1.27.3", "-", "-", []string{"1.27.3"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := scenarioInput(t, tc.policy, tc.pin, tc.running, tc.upstream, tc.opts)
			d := Resolve(context.Background(), in).Decisions[0]
			if d.New() == nil {
				t.Fatalf("nothing locked: %v %v", d.Refusal(), d.Err())
			}
			if !slices.Equal(d.New().Tags, tc.want) {
				t.Errorf("tags %q, want %q (locked %s)", d.New().Tags, tc.want, d.New().Ref())
			}
		})
	}
}
