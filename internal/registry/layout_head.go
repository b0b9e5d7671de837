package registry

import (
	"context"
	"fmt"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/pin-tool/pin/internal/image"
)

// Head says which digest ref (a tag, or a "sha256:" digest) names in the
// layout mirror: the digest, or an error wrapping image.ErrNotFound. As
// Remote.Head, for mirrors; it reads the layout's index and, for a digest,
// whether the blob is there.
func (l *Layout) Head(_ context.Context, repo, ref string) (string, error) {
	if !strings.HasPrefix(ref, "sha256:") {
		_, digest, err := l.manifest(context.Background(), repo, ref)
		return digest, err
	}
	h, err := v1.NewHash(ref)
	if err != nil {
		return "", err
	}
	rc, err := l.path.Blob(h)
	if err != nil {
		return "", fmt.Errorf("manifest %s of %s in the layout mirror: %w", ref, repo, image.ErrNotFound)
	}
	return ref, rc.Close()
}
