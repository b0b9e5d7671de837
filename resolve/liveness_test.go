package resolve

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/pin-tool/pin/internal/image"
)

// headRegistry is a fake registry that answers HEAD requests from heads
// (ref → digest; absent: not found) and counts them.
type headRegistry struct {
	Registry
	mu    sync.Mutex
	heads map[string]string
	asked []string
}

func (h *headRegistry) Head(_ context.Context, repo, ref string) (string, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.asked = append(h.asked, ref)
	if d, ok := h.heads[ref]; ok {
		return d, nil
	}
	return "", fmt.Errorf("%s:%s: %w", repo, ref, image.ErrNotFound)
}

func TestLiveness(t *testing.T) {
	locked := word(repo, "1.27.3")
	other := word(repo, "1.22.6")
	for _, tc := range []struct {
		name      string
		tag       string
		tags      []string
		heads     map[string]string
		want      string // statuses
		wantAsked int
	}{
		{"served, tag in place", "1.27.3", nil, map[string]string{locked.Digest: locked.Digest, "1.27.3": locked.Digest}, "current", 2},
		{"digest gone", "1.27.3", nil, map[string]string{"1.27.3": locked.Digest}, "digest-gone", 2},
		{"tag re-published", "1.27.3", nil, map[string]string{locked.Digest: locked.Digest, "1.27.3": other.Digest}, "tag-moved", 2},
		{"a recorded tag re-published", "", []string{"v1.27.3", "1.27"}, map[string]string{locked.Digest: locked.Digest, "v1.27.3": other.Digest, "1.27": other.Digest}, "tag-moved", 2},
		{"a floating tag moves by design", "latest", []string{"1.27"}, map[string]string{locked.Digest: locked.Digest, "latest": other.Digest}, "current", 1},
		{"a tag deleted upstream", "1.27.3", nil, map[string]string{locked.Digest: locked.Digest}, "current", 2},
		{"both", "1.27.3", []string{"1.27.3"}, map[string]string{"1.27.3": other.Digest}, "digest-gone,tag-moved", 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// exact, pinned and locked at 1.27.3, nothing running.
			in := outdatedInput(t, "exact", "1.27.3", "-", "-", "-")
			in.Old.Modules[0].Tag, in.Old.Modules[0].Tags = tc.tag, tc.tags
			base := in.Registry(repo)
			h := &headRegistry{Registry: base, heads: tc.heads}
			in.Registry = func(string) Registry { return h }
			s := Outdated(context.Background(), in, nil)[0]
			if got := joinStatuses(s.Statuses); got != tc.want {
				t.Errorf("statuses %s, want %s; findings %v", got, tc.want, s.Findings)
			}
			if len(h.asked) != tc.wantAsked {
				t.Errorf("%d HEAD requests (%v), want %d", len(h.asked), h.asked, tc.wantAsked)
			}
			for _, f := range s.Findings {
				if f.Status == StatusTagMoved && !strings.Contains(f.Message, "re-published") {
					t.Errorf("tag-moved says %q", f.Message)
				}
				if f.Status == StatusDigestGone && !strings.Contains(f.Message, "the next pull of the lock fails") {
					t.Errorf("digest-gone says %q", f.Message)
				}
			}
		})
	}
}
