package source

import (
	"errors"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"

	"github.com/pin-tool/pin/internal/catalogue"
	"github.com/pin-tool/pin/internal/host/published"
	"github.com/pin-tool/pin/internal/observe"
	"github.com/pin-tool/pin/internal/registry"
	"github.com/pin-tool/pin/internal/verify"
)

// observationHosts builds the adapters of hosts read from their
// published observations, sharing one registry client per registry (one
// ping and one session a run) and the registry cache.
type observationHosts struct {
	c       *catalogue.Catalogue
	o       Options
	counter *registry.Counter // nil: requests not counted
	remotes map[string]*registry.Remote
}

func (b *observationHosts) host(h *catalogue.Host) observe.Host {
	p := &published.Host{Name: h.Name, Location: h.Observations, MaxAge: h.MaxAge}
	if v := h.Verify; v != nil {
		p.Trust = verify.Spec{Keys: v.Keys, Issuer: v.Issuer, Subject: v.Subject, SubjectRegex: v.SubjectRegex, TrustedRoot: v.TrustedRoot}
	}
	dir := b.o.CacheDir
	if dir == "" {
		dir, _ = registry.DefaultCacheDir()
	}
	if dir != "" {
		p.Cache = published.NewCache(dir)
	}
	repo, oci := strings.CutPrefix(h.Observations, published.OCIScheme)
	if !oci {
		return p
	}
	if b.o.Offline {
		return offlineHost(h.Name)
	}
	ref, err := name.NewRepository(repo)
	if err != nil {
		return p // the catalogue refused it already; the reader says so again
	}
	regHost := ref.RegistryStr()
	rem, ok := b.remotes[regHost]
	if !ok {
		opts := registry.RemoteOptions{Host: regHost, Concurrency: b.o.Concurrency, Timeout: b.o.Timeout, CertsDir: b.o.CertsDir}
		if b.counter != nil {
			opts.Transport = b.counter
		}
		if dir != "" {
			opts.Cache = registry.NewCache(dir)
		}
		if conf := b.c.Registry(regHost); conf != nil {
			opts.Mirror, opts.Insecure, opts.TokenHosts = conf.MirrorHost, conf.Insecure, conf.TokenHosts
			opts.TLS = registry.TLSFiles{CAFile: conf.CAFile, CertFile: conf.ClientCert, KeyFile: conf.ClientKey}
		}
		rem = registry.NewRemote(opts)
		b.remotes[regHost] = rem
	}
	p.Registry = rem
	return p
}

// isRefusal reports whether err is a published observation refused.
func isRefusal(err error) bool { return errors.Is(err, published.ErrRefused) }
