package published

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/pin-tool/pin/internal/host"
	"github.com/pin-tool/pin/internal/image"
	"github.com/pin-tool/pin/internal/verify"
	"github.com/pin-tool/pin/internal/verify/sigstore"
)

// ClockSkew is how far in the future an observation's read time may be:
// the clocks of the host and of the reader differ, but not by more than
// NTP lets them; further is refused as Future.
const ClockSkew = 5 * time.Minute

// DefaultMaxAge is the maximum age of an observation when its host says
// none: an agent that runs every 15 minutes misses three runs first.
const DefaultMaxAge = time.Hour

// OCIScheme prefixes a location that is an OCI repository.
const OCIScheme = "oci://"

// Registry is what reading an OCI observation needs of a registry:
// internal/registry's Remote. With its disk cache, Manifest and Blob by
// digest cost nothing warm; Head costs one HEAD, always.
type Registry interface {
	Head(ctx context.Context, repo, ref string) (string, error)
	Manifest(ctx context.Context, repo, ref string) ([]byte, string, error)
	Blob(ctx context.Context, repo, digest string) ([]byte, error)
}

// Host is a host read from its published observations. Its fields are
// set before it is read and not changed after; it is safe for concurrent
// use.
type Host struct {
	// Name is the catalogue's name of the host; an observation must name
	// it.
	Name string
	// Location is where it publishes: a file, a folder (holding
	// NAME.json), or oci://registry/repository (tagged NAME).
	Location string
	// Trust is who must have signed: cosign public keys, or a keyless
	// identity (OCI only).
	Trust verify.Spec
	// MaxAge bounds the age of an observation; zero means DefaultMaxAge.
	MaxAge time.Duration
	// Registry reads an OCI location; it must be set for one.
	Registry Registry
	// Cache remembers signatures verified, by digest; nil remembers
	// nothing (every read verifies again).
	Cache *Cache
	// Now is the clock; nil means time.Now.
	Now func() time.Time

	once    sync.Once
	openErr error
	policy  *sigstore.Policy
	trust   string
}

// Open loads the host's trust policy, once; a policy that does not load
// is bad input, to report before any host is read (Read calls it too).
func (h *Host) Open() error {
	h.once.Do(func() { h.openErr = h.open() })
	return h.openErr
}

func (h *Host) open() error {
	spec := h.Trust
	// An observation is bound to the repository it is published in: a
	// signed observation copied to another fleet's repository does not
	// count there.
	spec.MatchRepository = true
	p, err := sigstore.New(spec)
	if err != nil {
		return fmt.Errorf("host %s: %w", h.Name, err)
	}
	id, err := trustID(spec)
	if err != nil {
		return fmt.Errorf("host %s: %w", h.Name, err)
	}
	h.policy, h.trust = p, id
	return nil
}

// Observe reads, verifies and returns what the host runs. A refusal is a
// *Refusal (ErrRefused); an error reaching the file or the registry is
// returned as such, naming the host.
func (h *Host) Observe(ctx context.Context) (*host.Snapshot, error) {
	o, err := h.Read(ctx)
	if err != nil {
		return nil, err
	}
	return o.Snapshot, nil
}

// Read is Observe, with the whole observation and how it was verified.
func (h *Host) Read(ctx context.Context) (*Observation, error) {
	if err := h.Open(); err != nil {
		return nil, err
	}
	var (
		body  []byte
		where string
		err   error
	)
	if repo, ok := strings.CutPrefix(h.Location, OCIScheme); ok {
		body, where, err = h.readOCI(ctx, repo)
	} else {
		body, where, err = h.readFile()
	}
	if err != nil {
		return nil, err
	}
	o, err := Parse(body)
	if err != nil {
		return nil, h.refuse(where, Malformed, err.Error())
	}
	if o.Host != h.Name {
		return nil, h.refuse(where, OtherHost, fmt.Sprintf("it was published by %s; a host's observations are published under its own name", o.Host))
	}
	now := time.Now
	if h.Now != nil {
		now = h.Now
	}
	t := now()
	if o.ReadAt.After(t.Add(ClockSkew)) {
		return nil, h.refuse(where, Future, fmt.Sprintf("read at %s, %s ahead of this clock; more than %s is not clock skew: check the host's clock",
			o.ReadAt.Format(time.RFC3339), o.ReadAt.Sub(t).Round(time.Second), ClockSkew))
	}
	maxAge := h.MaxAge
	if maxAge <= 0 {
		maxAge = DefaultMaxAge
	}
	if age := t.Sub(o.ReadAt); age > maxAge {
		return nil, h.refuse(where, TooOld, fmt.Sprintf("read at %s, %s ago; max_age is %s: is the host's agent (pin observe) still running?",
			o.ReadAt.Format(time.RFC3339), age.Round(time.Second), maxAge))
	}
	// Fresh enough, and not older than one read before: an observation
	// that goes back in time could hide what the host started since.
	last, seen := h.Cache.newest(h.Location, h.Name)
	if seen && o.ReadAt.Before(last) {
		return nil, h.refuse(where, RolledBack, fmt.Sprintf("read at %s, but an observation read at %s was verified here before: the publication went back (a stale mirror or cache, or a replay); the host's agent replaces it at its next run",
			o.ReadAt.Format(time.RFC3339), last.Format(time.RFC3339)))
	}
	h.Cache.saw(h.Location, h.Name, o.ReadAt, last, seen)
	return o, nil
}

func (h *Host) refuse(where string, r Reason, detail string) *Refusal {
	return &Refusal{Host: h.Name, Where: where, Reason: r, Detail: detail}
}

// refusal turns a verification verdict into a refusal; other errors
// (the registry's) pass.
func (h *Host) refusal(where string, err error) error {
	var f *verify.Failure
	if !errors.As(err, &f) {
		return fmt.Errorf("host %s: verifying the observation %s: %w", h.Name, where, err)
	}
	r := WrongSigner
	switch f.Reason {
	case verify.Unsigned:
		r = Unsigned
	case verify.OtherDigest, verify.BadSignature, verify.OtherRepository:
		r = Tampered
	}
	return h.refuse(where, r, f.Error())
}

// readFile reads a file or folder observation and checks its signature.
func (h *Host) readFile() ([]byte, string, error) {
	path := h.Location
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		path = filepath.Join(path, h.Name+".json")
	}
	body, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, "", h.refuse(path, NotPublished, "no such file: run pin observe "+h.Name+" on the host, or correct observations")
	}
	if err != nil {
		return nil, "", fmt.Errorf("host %s: %w", h.Name, err)
	}
	sig, err := os.ReadFile(SignatureFile(path))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, "", h.refuse(path, Unsigned, "no signature "+SignatureFile(path)+" beside it")
	}
	if err != nil {
		return nil, "", fmt.Errorf("host %s: %w", h.Name, err)
	}
	if _, err := h.policy.VerifyBlob(sig, body); err != nil {
		return nil, "", h.refusal(path, err)
	}
	return body, path, nil
}

// readOCI reads the observation tagged with the host's name in repo and
// checks its signature: one HEAD, and, warm, nothing more.
func (h *Host) readOCI(ctx context.Context, repo string) ([]byte, string, error) {
	where := OCIScheme + repo + ":" + h.Name
	if h.Registry == nil {
		return nil, "", fmt.Errorf("host %s: no registry client for %s", h.Name, where)
	}
	digest, err := h.Registry.Head(ctx, repo, h.Name)
	if errors.Is(err, image.ErrNotFound) {
		return nil, "", h.refuse(where, NotPublished, "no such tag: run pin observe "+h.Name+" --push "+repo+" on the host")
	}
	if err != nil {
		return nil, "", fmt.Errorf("host %s: reading %s: %w", h.Name, where, err)
	}
	where += "@" + image.Short(digest)
	raw, _, err := h.Registry.Manifest(ctx, repo, digest)
	if err != nil {
		return nil, "", fmt.Errorf("host %s: reading %s: %w", h.Name, where, err)
	}
	m, err := v1.ParseManifest(bytes.NewReader(raw))
	if err != nil || len(m.Layers) != 1 || m.Layers[0].MediaType != MediaType {
		return nil, "", h.refuse(where, Malformed, "not a pin observation artifact (one layer of "+MediaType+")")
	}
	body, err := h.Registry.Blob(ctx, repo, m.Layers[0].Digest.String())
	if err != nil {
		return nil, "", fmt.Errorf("host %s: reading %s: %w", h.Name, where, err)
	}
	if err := h.verifyOCI(ctx, repo, digest); err != nil {
		return nil, "", h.refusal(where, err)
	}
	return body, where, nil
}

// verifyOCI checks repo@digest's signature: from the signature a
// previous run verified for this digest and trust (by digest, from the
// cache: no request), else as cosign verify does.
func (h *Host) verifyOCI(ctx context.Context, repo, digest string) error {
	reg := sigstore.Registry{Source: h.Registry}
	if sigDigest, ok := h.Cache.verified(h.trust, repo, digest); ok {
		if _, err := h.policy.Recheck(ctx, reg, repo, digest, sigDigest); err == nil {
			return nil
		}
	}
	if r, ok := h.Registry.(sigstore.Referrers); ok {
		reg.Referrers = r
	}
	res, err := h.policy.Verify(ctx, reg, repo, digest)
	if err != nil {
		return err
	}
	h.Cache.remember(h.trust, repo, digest, res.Signature)
	return nil
}

// trustID names a trust policy by what it trusts (the keys' content, or
// the identity and the trusted root's content), for the verdict cache.
func trustID(spec verify.Spec) (string, error) {
	h := sha256.New()
	for _, k := range spec.Keys {
		b, err := os.ReadFile(k)
		if err != nil {
			return "", fmt.Errorf("verify key: %w", err)
		}
		fmt.Fprintf(h, "key %x\n", sha256.Sum256(b))
	}
	if spec.TrustedRoot != "" {
		b, err := os.ReadFile(spec.TrustedRoot)
		if err != nil {
			return "", fmt.Errorf("trusted root: %w", err)
		}
		fmt.Fprintf(h, "root %x\n", sha256.Sum256(b))
	}
	fmt.Fprintf(h, "issuer %q subject %q", spec.Issuer, spec.Subject)
	if spec.SubjectRegex != nil {
		fmt.Fprintf(h, " regex %q", spec.SubjectRegex.String())
	}
	fmt.Fprintf(h, " repository %t\n", spec.MatchRepository)
	return hex.EncodeToString(h.Sum(nil)), nil
}
