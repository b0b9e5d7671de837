package source

import (
	"context"
	"fmt"
	"sync"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/pin-tool/pin/internal/catalogue"
	"github.com/pin-tool/pin/internal/image"
	"github.com/pin-tool/pin/internal/registry"
	"github.com/pin-tool/pin/internal/verify/sigstore"
	"github.com/pin-tool/pin/resolve"
)

// Registries opens each registry source once per run and hands it to every
// module of its registry host: a layout mirror, the cache alone (offline),
// or a registry over the network. Safe for concurrent use.
type Registries struct {
	c *catalogue.Catalogue
	o Options
	// counter counts every request sent to a registry, for -v; observed
	// those sent to read hosts' published observations (Load wires it).
	counter  *registry.Counter
	observed *registry.Counter
	mu       sync.Mutex
	src      map[string]resolve.Registry
	// sig is where each registry's signatures are read (the same client
	// as src's), and policies the verify blocks loaded (verifiers.go).
	sig      map[string]sigstore.Registry
	policies map[*catalogue.Verify]policy
}

// NewRegistries prepares the registries of catalogue c; nothing is opened
// before For asks.
func NewRegistries(c *catalogue.Catalogue, o Options) *Registries {
	return &Registries{c: c, o: o, counter: registry.NewCounter(remote.DefaultTransport), observed: registry.NewCounter(remote.DefaultTransport), src: map[string]resolve.Registry{},
		sig: map[string]sigstore.Registry{}, policies: map[*catalogue.Verify]policy{}}
}

// Summary lists the requests sent to each registry, by kind, one line per
// registry (for -v).
func (r *Registries) Summary() []string {
	out := r.counter.Summary()
	for _, l := range r.observed.Summary() {
		out = append(out, l+" reading published observations")
	}
	return out
}

// cache is the on-disk cache of immutable content: CacheDir, else the
// user cache folder; none when neither can be had.
func (r *Registries) cache() *registry.Cache {
	dir := r.o.CacheDir
	if dir == "" {
		d, err := registry.DefaultCacheDir()
		if err != nil {
			return nil
		}
		dir = d
	}
	return registry.NewCache(dir)
}

// For returns the source for a repository, or nil when none may be asked
// (offline with no cache, or a name that is not a repository).
func (r *Registries) For(repo string) resolve.Registry {
	ref, err := name.NewRepository(repo)
	if err != nil {
		return nil
	}
	regHost := ref.RegistryStr()
	r.mu.Lock()
	defer r.mu.Unlock()
	if s, ok := r.src[regHost]; ok {
		return s
	}
	var s resolve.Registry
	var sig sigstore.Registry
	conf := r.c.Registry(regHost)
	switch {
	case conf != nil && conf.MirrorLayout != "":
		l, err := registry.OpenLayout(conf.MirrorLayout)
		if err != nil {
			f := failing{err: fmt.Errorf("mirror of %s: %w", regHost, err)}
			s, sig = f, sigstore.Registry{Source: f}
		} else {
			l.Sightings = r.cache() // min_age's first sightings
			s, sig = l, sigstore.Registry{Source: l}
		}
	case r.o.Offline:
		if c := r.cache(); c != nil {
			o := registry.Offline{Cache: c}
			s, sig = o, sigstore.Registry{Source: o, Referrers: o}
		}
	default:
		opts := registry.RemoteOptions{Host: regHost, Concurrency: r.o.Concurrency, Cache: r.cache(), Transport: r.counter, Timeout: r.o.Timeout, CertsDir: r.o.CertsDir}
		// Where the registry hands out tokens, one covers many of these.
		opts.Repositories = r.c.Repositories(regHost)
		if conf != nil {
			opts.Mirror, opts.Insecure, opts.TokenHosts = conf.MirrorHost, conf.Insecure, conf.TokenHosts
			opts.TLS = registry.TLSFiles{CAFile: conf.CAFile, CertFile: conf.ClientCert, KeyFile: conf.ClientKey}
		}
		rem := registry.NewRemote(opts)
		s, sig = rem, sigstore.Registry{Source: rem, Referrers: rem, Heads: rem}
	}
	r.src[regHost] = s
	if s != nil {
		r.sig[regHost] = sig
	}
	return s
}

// failing is a registry that could not be opened: every call says why.
type failing struct{ err error }

func (f failing) Tags(context.Context, string) ([]string, error) { return nil, f.err }
func (f failing) Image(context.Context, string, string, string) (image.Image, error) {
	return image.Image{}, f.err
}
func (f failing) Manifest(context.Context, string, string) ([]byte, string, error) {
	return nil, "", f.err
}
func (f failing) Blob(context.Context, string, string) ([]byte, error) { return nil, f.err }
