package enforce

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/pin-tool/pin/internal/image"
	"github.com/pin-tool/pin/resolve"
)

// DefaultMemoSize bounds the answers a Memo keeps.
const DefaultMemoSize = 4096

// Memo keeps, in memory, the registry's answers for images named by
// digest (content-addressed: they never change), so that a server asks
// once per digest, whatever asks and however often. Answers by tag, tag
// lists and errors are not kept. When full, it starts again empty: the
// on-disk cache below it still holds the content. Safe for concurrent use.
type Memo struct {
	next  func(string) resolve.Registry
	size  int
	mu    sync.Mutex
	byKey map[string]image.Image
	// Asked counts the requests passed to the registries below.
	asked atomic.Int64
}

// NewMemo puts a memo in front of the registries next returns; size <= 0
// means DefaultMemoSize.
func NewMemo(next func(string) resolve.Registry, size int) *Memo {
	if size <= 0 {
		size = DefaultMemoSize
	}
	return &Memo{next: next, size: size, byKey: map[string]image.Image{}}
}

// Asked is how many Image and Tags calls went past the memo.
func (m *Memo) Asked() int { return int(m.asked.Load()) }

// For returns the memoised source for repo, or nil when next has none.
func (m *Memo) For(repo string) resolve.Registry {
	r := m.next(repo)
	if r == nil {
		return nil
	}
	return memoRegistry{m: m, next: r}
}

type memoRegistry struct {
	m    *Memo
	next resolve.Registry
}

func (r memoRegistry) Tags(ctx context.Context, repo string) ([]string, error) {
	r.m.asked.Add(1)
	return r.next.Tags(ctx, repo)
}

func (r memoRegistry) Image(ctx context.Context, repo, ref, platform string) (image.Image, error) {
	if !strings.HasPrefix(ref, "sha256:") {
		r.m.asked.Add(1)
		return r.next.Image(ctx, repo, ref, platform)
	}
	key := repo + "@" + ref + "|" + platform
	r.m.mu.Lock()
	img, ok := r.m.byKey[key]
	r.m.mu.Unlock()
	if ok {
		return cloneImage(img), nil
	}
	r.m.asked.Add(1)
	img, err := r.next.Image(ctx, repo, ref, platform)
	if err != nil {
		return img, err
	}
	r.m.mu.Lock()
	if len(r.m.byKey) >= r.m.size {
		r.m.byKey = map[string]image.Image{}
	}
	r.m.byKey[key] = cloneImage(img)
	r.m.mu.Unlock()
	return img, nil
}

// cloneImage copies the maps of an image, so that no caller writes into
// what the memo keeps.
func cloneImage(img image.Image) image.Image {
	if img.Labels != nil {
		l := make(map[string]string, len(img.Labels))
		for k, v := range img.Labels {
			l[k] = v
		}
		img.Labels = l
	}
	if img.Platforms != nil {
		p := make(map[string]string, len(img.Platforms))
		for k, v := range img.Platforms {
			p[k] = v
		}
		img.Platforms = p
	}
	return img
}
