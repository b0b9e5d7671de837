package published

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/sigstore/sigstore/pkg/signature/payload"

	"github.com/pin-tool/pin/internal/verify/sigstore"
)

// PushOptions say how to reach the registry.
type PushOptions struct {
	// Keychain finds credentials; nil means authn.DefaultKeychain.
	Keychain authn.Keychain
	// Transport is the base transport; nil means remote.DefaultTransport.
	Transport http.RoundTripper
}

// Push publishes the observation to repo (registry/repository, no tag)
// under the tag of its host's name, signed by s as "cosign sign --key"
// signs: the artifact is written by digest, then its signature under
// "sha256-<hex>.sig", then the tag moves, so that the tag never names an
// unsigned observation. It returns repo@digest.
func Push(ctx context.Context, repo string, o *Observation, s *Signer, opts PushOptions) (string, error) {
	r, err := name.NewRepository(repo)
	if err != nil {
		return "", fmt.Errorf("observation repository %q: %w", repo, err)
	}
	tag, err := name.NewTag(r.Name()+":"+o.Host, name.StrictValidation)
	if err != nil || !ociTag.MatchString(o.Host) {
		return "", fmt.Errorf("host %q cannot name a tag: letters, digits, '_', '.', '-', at most 128, not starting with '.' or '-'", o.Host)
	}
	body, err := o.Marshal()
	if err != nil {
		return "", err
	}
	img, err := artifact(body)
	if err != nil {
		return "", err
	}
	d, err := img.Digest()
	if err != nil {
		return "", err
	}
	ropts := []remote.Option{remote.WithContext(ctx), remote.WithAuthFromKeychain(keychain(opts.Keychain))}
	if opts.Transport != nil {
		ropts = append(ropts, remote.WithTransport(opts.Transport))
	}
	byDigest := r.Digest(d.String())
	if err := retry(ctx, func() error { return remote.Write(byDigest, img, ropts...) }); err != nil {
		return "", fmt.Errorf("pushing the observation of %s to %s: %w", o.Host, r, err)
	}
	pl, err := json.Marshal(payload.SimpleContainerImage{
		Critical: payload.Critical{
			Identity: payload.Identity{DockerReference: r.Name()},
			Image:    payload.Image{DockerManifestDigest: d.String()},
			Type:     payload.CosignSignatureType,
		},
	})
	if err != nil {
		return "", err
	}
	sig, err := s.Sign(pl)
	if err != nil {
		return "", fmt.Errorf("signing the observation of %s: %w", o.Host, err)
	}
	sigImg, err := mutate.Append(mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON),
		mutate.Addendum{
			Layer:       static.NewLayer(pl, "application/vnd.dev.cosign.simplesigning.v1+json"),
			Annotations: map[string]string{sigstore.SignatureAnnotation: base64.StdEncoding.EncodeToString(sig)},
		})
	if err != nil {
		return "", err
	}
	if err := retry(ctx, func() error { return remote.Write(r.Tag(sigstore.SignatureTag(d.String())), sigImg, ropts...) }); err != nil {
		return "", fmt.Errorf("pushing the signature of %s's observation: %w", o.Host, err)
	}
	if err := retry(ctx, func() error { return remote.Tag(tag, img, ropts...) }); err != nil {
		return "", fmt.Errorf("tagging the observation of %s as %s: %w", o.Host, tag, err)
	}
	return byDigest.String(), nil
}

// retry runs a write up to three times. Every observation of a fleet
// shares its config blob, and a registry receiving the same blob from
// many hosts at once may fail one upload (distribution answers
// DIGEST_INVALID, then MANIFEST_BLOB_UNKNOWN); the next attempt finds
// the blob there. Every write is idempotent: content by digest, a tag
// set to the same digest.
func retry(ctx context.Context, write func() error) error {
	var err error
	for attempt := range 3 {
		if attempt > 0 {
			select {
			case <-ctx.Done():
				return err
			case <-time.After(time.Duration(attempt) * 200 * time.Millisecond):
			}
		}
		if err = write(); err == nil {
			return nil
		}
	}
	return err
}

// ociTag is what an OCI tag may be (the distribution spec's grammar).
var ociTag = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$`)

// artifact is the OCI artifact holding body: an image manifest whose
// config is of ConfigMediaType and whose one layer is body.
func artifact(body []byte) (v1.Image, error) {
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, ConfigMediaType)
	return mutate.AppendLayers(img, static.NewLayer(body, MediaType))
}

func keychain(k authn.Keychain) authn.Keychain {
	if k == nil {
		return authn.DefaultKeychain
	}
	return k
}
